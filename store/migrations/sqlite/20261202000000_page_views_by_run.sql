-- A view is given when the ask starts, before its page is made (a model may take minutes), so it
-- names the run whose page it shows rather than the page. No view was ever handed out under the
-- page-bound table (nothing offered them yet), so it is replaced, not migrated.
DROP TABLE page_views;
CREATE TABLE page_views (
    view_hash   TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL
);
CREATE INDEX page_views_by_run ON page_views (run_id);
