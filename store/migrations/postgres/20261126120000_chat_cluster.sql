-- Chat executions across processes (src/chat/events.rs, src/chat/interrupted.rs).
-- `owner` is the orchestrator instance running the call and `heartbeat_at` when it last said so;
-- a running execution whose heartbeat is older than the lease is reported `interrupted`, once.
-- `stop_requested_at` is a stop sent from any process, read by the owner between chunks.
ALTER TABLE chat_executions ADD COLUMN owner TEXT;
ALTER TABLE chat_executions ADD COLUMN heartbeat_at BIGINT;
ALTER TABLE chat_executions ADD COLUMN stop_requested_at BIGINT;
ALTER TABLE chat_executions DROP CONSTRAINT chat_executions_status_check;
ALTER TABLE chat_executions ADD CONSTRAINT chat_executions_status_check
    CHECK (status IN ('running','succeeded','failed','cancelled','refused','interrupted'));
CREATE INDEX chat_executions_running_idx ON chat_executions (status) WHERE status = 'running';

-- Chat events and stops for every process: a row per message, announced by a NOTIFY on
-- `tessera_chat` carrying its seq (a NOTIFY payload is capped at 8000 bytes; events are not).
-- Rows are only kept long enough for every listener to read them.
CREATE TABLE chat_bus (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    origin      TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX chat_bus_created_idx ON chat_bus (created_at);
