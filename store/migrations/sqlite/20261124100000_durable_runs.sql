-- Durable runs: leases with a fencing epoch, retry backoff, what a waiting run waits for, which
-- step failed, and the input each step was handed (so a re-run after a crash sees the same input).
ALTER TABLE runs ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN failed_step TEXT;
ALTER TABLE runs ADD COLUMN failed_step_index INTEGER;
ALTER TABLE runs ADD COLUMN wait_page_id TEXT;
ALTER TABLE runs ADD COLUMN wait_deadline INTEGER;
ALTER TABLE runs ADD COLUMN wait_on_timeout TEXT CHECK (wait_on_timeout IN ('fail','continue','cancel'));
ALTER TABLE runs ADD COLUMN finished_at INTEGER;

ALTER TABLE run_steps ADD COLUMN input TEXT;

-- Claiming scans ready runs by due time and running runs by lease expiry.
CREATE INDEX runs_claim_idx ON runs (status, next_attempt_at);
CREATE INDEX runs_lease_idx ON runs (status, lease_expires_at);
-- The timeout sweep scans waiting runs by deadline.
CREATE INDEX runs_wait_idx ON runs (status, wait_deadline);
-- The runs list pages newest first.
CREATE INDEX runs_created_idx ON runs (created_at, id);
