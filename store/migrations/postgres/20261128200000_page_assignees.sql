-- Named people (issue 27): a page may be answered by assignees, each through a link of their own.
--
-- `approvals_required` is how many assignees must submit before the page is settled (NULL for a
-- page with one anonymous link, answered once as before); `decline_reason_required` says whether
-- a Decline must carry a reason. One `page_assignees` row per person holds their link (its
-- token's hash) and their answer. The page itself still goes `open → submitted` once, when the
-- answer that settles it is recorded, in the same transaction, so the trigger
-- `pages_submitted_readies_run` still makes the run ready exactly once.
ALTER TABLE pages ADD COLUMN approvals_required BIGINT;
ALTER TABLE pages ADD COLUMN decline_reason_required BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE page_assignees (
    page_id      TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    position     BIGINT NOT NULL,
    assignee     TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    outcome      TEXT CHECK (outcome IN ('submitted', 'declined')),
    response     TEXT,
    reason       TEXT,
    answered_at  BIGINT,
    PRIMARY KEY (page_id, position),
    UNIQUE (page_id, assignee)
);
