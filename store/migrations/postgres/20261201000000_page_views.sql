-- A capability for one page, held by the view an MCP host renders inline (MCP Apps): neither the
-- page's link nor derived from it, so a model reading a tool result never holds a way to answer
-- the page. Only its hash is kept; it goes with its page.
CREATE TABLE page_views (
    view_hash   TEXT PRIMARY KEY,
    page_id     TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL
);
CREATE INDEX page_views_by_page ON page_views (page_id);
