-- More links for one assignee: a reminder, or "Answer" in the inbox, gives a person a fresh link
-- (only hashes are kept, so an earlier link cannot be sent again) without ending the ones already
-- in their mail. The first link stays in `page_assignees.token_hash`; the later ones live here,
-- the newest few per person. An explicit reissue replaces the first and deletes these.
CREATE TABLE assignee_links (
    token_hash  TEXT PRIMARY KEY,
    page_id     TEXT NOT NULL,
    position    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    FOREIGN KEY (page_id, position) REFERENCES page_assignees (page_id, position) ON DELETE CASCADE
);
CREATE INDEX assignee_links_by_person ON assignee_links (page_id, position, created_at);
