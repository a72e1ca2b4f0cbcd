-- A person's sign-in (issue 31): single-use links e-mailed to an address, kept as the SHA-256 of
-- their token only. A link is consumed by setting `used_at` in the one statement that checks it
-- is unused and unexpired, so two presses of the same link sign in at most once.
CREATE TABLE sign_in_links (
    token_hash  TEXT PRIMARY KEY,
    email       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
);
CREATE INDEX sign_in_links_expiry ON sign_in_links (expires_at);

-- The inbox and "may this address sign in" look assignees up by address, without case.
CREATE INDEX page_assignees_by_person ON page_assignees (lower(assignee));
