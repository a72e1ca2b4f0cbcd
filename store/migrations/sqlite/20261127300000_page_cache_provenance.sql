-- The page cache keyed on shape, not values: each cached page records what its literal text owes
-- to the request it was built for (agent/cache/literals.rs), and each generation what the cache
-- did for it (hit, miss, stale, refresh, off) so /metrics can count lookups.
-- Keys computed before this change (over the rendered prompt) are never looked up again, so the
-- old rows are dropped rather than given an empty provenance.
DELETE FROM page_cache;
ALTER TABLE page_cache ADD COLUMN provenance TEXT NOT NULL DEFAULT '{}';
ALTER TABLE generations ADD COLUMN cache_lookup TEXT;
