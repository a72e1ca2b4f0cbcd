-- Chat orchestration (DESIGN.md §8): sessions with their capability scope, the visible transcript
-- and the model's conversation, micro-threads, confirmations bound to the SHA-256 of an exact
-- operation and its canonical arguments, approval grants, and the execution audit trail.
-- Timestamps are unix milliseconds, JSON is TEXT, ids are UUID text.
CREATE TABLE chat_sessions (
    id          TEXT PRIMARY KEY,
    scope       TEXT NOT NULL,
    model       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE chat_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    channel     TEXT NOT NULL CHECK (channel IN ('transcript','model')),
    role        TEXT NOT NULL,
    thread_id   TEXT,
    body        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX chat_messages_session_idx ON chat_messages (session_id, channel, id);

CREATE TABLE chat_threads (
    id                TEXT PRIMARY KEY,
    session_id        TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    intent            TEXT NOT NULL,
    slots             TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('waiting_for_user','in_progress','blocked','workflow_proposed','done','failed')),
    pending_question  TEXT,
    summary           TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX chat_threads_session_idx ON chat_threads (session_id, updated_at);

CREATE TABLE chat_confirmations (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    thread_id    TEXT NOT NULL REFERENCES chat_threads (id) ON DELETE CASCADE,
    call_id      TEXT NOT NULL,
    operation    TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    hash         TEXT NOT NULL,
    reasons      TEXT NOT NULL,
    preview      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending','approved','denied','consumed')),
    scope        TEXT CHECK (scope IN ('once','operation','session')),
    created_at   INTEGER NOT NULL,
    decided_at   INTEGER,
    consumed_at  INTEGER
);
CREATE INDEX chat_confirmations_session_idx ON chat_confirmations (session_id, status);

CREATE TABLE chat_grants (
    session_id       TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    operation        TEXT NOT NULL,
    confirmation_id  TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (session_id, operation)
);

-- One row per tool call code looked at: run, refused, or cancelled. `confirmation_id` is UNIQUE so
-- a confirmation can stand behind at most one execution even if the status check were bypassed.
-- `seq` orders the trail (ids are random, and several calls can share a millisecond).
CREATE TABLE chat_executions (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    session_id       TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    thread_id        TEXT NOT NULL,
    operation        TEXT NOT NULL,
    arguments        TEXT NOT NULL,
    hash             TEXT NOT NULL,
    role             TEXT NOT NULL CHECK (role IN ('read','preview','mutation')),
    approval         TEXT NOT NULL,
    confirmation_id  TEXT UNIQUE REFERENCES chat_confirmations (id),
    status           TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','cancelled','refused')),
    items_total      INTEGER NOT NULL,
    items_done       INTEGER NOT NULL DEFAULT 0,
    chunks_total     INTEGER NOT NULL,
    chunks_done      INTEGER NOT NULL DEFAULT 0,
    item_ids         TEXT,
    result           TEXT,
    error            TEXT,
    created_at       INTEGER NOT NULL,
    finished_at      INTEGER
);
CREATE INDEX chat_executions_thread_idx ON chat_executions (thread_id, seq);
CREATE INDEX chat_executions_session_idx ON chat_executions (session_id, seq);

-- The demo site's items (src/demo/items.rs), served under /demo-api/items.
CREATE TABLE demo_items (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    description   TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('open','in_progress','completed')),
    priority      TEXT NOT NULL CHECK (priority IN ('low','medium','high')),
    assignee      TEXT,
    due_date      TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    completed_at  INTEGER
);
CREATE INDEX demo_items_status_idx ON demo_items (status, updated_at);
CREATE INDEX demo_items_updated_idx ON demo_items (updated_at);
