-- The digest of the declarative workflow file a run started on (NULL for Rust workflows): a run
-- whose file changed since is failed rather than resumed on different steps.
ALTER TABLE runs ADD COLUMN definition_digest TEXT;
