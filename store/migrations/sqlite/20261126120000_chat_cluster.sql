-- Chat executions across restarts (src/chat/interrupted.rs). SQLite serves one process, so the
-- PostgreSQL-only `chat_bus` table has no twin here. SQLite cannot alter a CHECK constraint:
-- the table is rebuilt with the `interrupted` status and the columns PostgreSQL gets
-- (`owner`: the orchestrator instance running the call; a running execution another instance
-- owns was left by a process that is gone, and is reported `interrupted`, once).
CREATE TABLE chat_executions_next (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    session_id        TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    thread_id         TEXT NOT NULL,
    operation         TEXT NOT NULL,
    arguments         TEXT NOT NULL,
    hash              TEXT NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('read','preview','mutation')),
    approval          TEXT NOT NULL,
    confirmation_id   TEXT UNIQUE REFERENCES chat_confirmations (id),
    status            TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','cancelled','refused','interrupted')),
    items_total       INTEGER NOT NULL,
    items_done        INTEGER NOT NULL DEFAULT 0,
    chunks_total      INTEGER NOT NULL,
    chunks_done       INTEGER NOT NULL DEFAULT 0,
    item_ids          TEXT,
    result            TEXT,
    error             TEXT,
    created_at        INTEGER NOT NULL,
    finished_at       INTEGER,
    owner             TEXT,
    heartbeat_at      INTEGER,
    stop_requested_at INTEGER
);
INSERT INTO chat_executions_next (seq, id, session_id, thread_id, operation, arguments, hash, role, approval,
    confirmation_id, status, items_total, items_done, chunks_total, chunks_done, item_ids, result, error,
    created_at, finished_at)
SELECT seq, id, session_id, thread_id, operation, arguments, hash, role, approval,
    confirmation_id, status, items_total, items_done, chunks_total, chunks_done, item_ids, result, error,
    created_at, finished_at
FROM chat_executions;
DROP TABLE chat_executions;
ALTER TABLE chat_executions_next RENAME TO chat_executions;
CREATE INDEX chat_executions_thread_idx ON chat_executions (thread_id, seq);
CREATE INDEX chat_executions_session_idx ON chat_executions (session_id, seq);
