-- The agent loop's live events per generation, and the page cache ("LLM then JIT").
-- Events are written before their generation's record exists, so there is no foreign key.
CREATE TABLE generation_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    generation_id  TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    payload        TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE (generation_id, seq)
);

CREATE INDEX generations_created_idx ON generations (created_at);

CREATE TABLE page_cache (
    key            TEXT PRIMARY KEY,
    tree           TEXT NOT NULL,
    generation_id  TEXT NOT NULL,
    model          TEXT NOT NULL,
    hits           INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    last_hit_at    INTEGER
);
