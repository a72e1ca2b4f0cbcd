-- Browser sessions (tower-sessions records): the admin login and chat sessions survive restarts.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    data        TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expires_at);
