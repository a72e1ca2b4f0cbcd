-- Approval stages (issue 31): a page may ask its people in ordered stages, the next asked only
-- once the one before is settled. One `page_stages` row per stage holds what settles it and
-- whom it asks (`members`, JSON, for the stages not started yet: their links do not exist until
-- then); `started_at` is set, in the transaction of the answer that settled the stage before,
-- when its people get their `page_assignees` rows (with `stage` naming it).
CREATE TABLE page_stages (
    page_id     TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    stage       INTEGER NOT NULL,
    required    INTEGER NOT NULL,
    on_decline  TEXT NOT NULL CHECK (on_decline IN ('settle', 'continue')),
    members     TEXT NOT NULL,
    started_at  INTEGER,
    PRIMARY KEY (page_id, stage)
);
ALTER TABLE page_assignees ADD COLUMN stage INTEGER NOT NULL DEFAULT 0;
