-- Tessera's first tables: settings, runs and their steps, generations, pages.
-- Timestamps are unix milliseconds (INTEGER), JSON is TEXT, ids are UUID text.
CREATE TABLE settings (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE runs (
    id                TEXT PRIMARY KEY,
    workflow          TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('ready','running','waiting','succeeded','failed','cancelled')),
    cursor            BIGINT NOT NULL DEFAULT 0,
    state             TEXT NOT NULL,
    attempts          BIGINT NOT NULL DEFAULT 0,
    error             TEXT,
    lease_owner       TEXT,
    lease_expires_at  BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX runs_status_idx ON runs (status, updated_at);

CREATE TABLE run_steps (
    run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step_index   BIGINT NOT NULL,
    name         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running','succeeded','failed')),
    output       TEXT,
    error        TEXT,
    attempts     BIGINT NOT NULL DEFAULT 0,
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    PRIMARY KEY (run_id, step_index)
);

CREATE TABLE generations (
    id           TEXT PRIMARY KEY,
    model        TEXT NOT NULL,
    provider     TEXT NOT NULL,
    prompt_hash  TEXT NOT NULL,
    outcome      TEXT NOT NULL CHECK (outcome IN ('ok','fell_back','failed')),
    turns        BIGINT NOT NULL,
    tokens_in    BIGINT NOT NULL,
    tokens_out   BIGINT NOT NULL,
    latency_ms   BIGINT NOT NULL,
    cache_hit    BOOLEAN NOT NULL,
    transcript   TEXT NOT NULL,
    tree         TEXT,
    created_at   BIGINT NOT NULL
);

CREATE TABLE pages (
    id             TEXT PRIMARY KEY,
    token_hash     TEXT NOT NULL UNIQUE,
    run_id         TEXT REFERENCES runs (id) ON DELETE CASCADE,
    generation_id  TEXT REFERENCES generations (id),
    status         TEXT NOT NULL CHECK (status IN ('open','submitted','revoked')),
    tree           TEXT NOT NULL,
    schema         TEXT,
    data           TEXT NOT NULL,
    response       TEXT,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    submitted_at   BIGINT
);
CREATE INDEX pages_run_idx ON pages (run_id);
