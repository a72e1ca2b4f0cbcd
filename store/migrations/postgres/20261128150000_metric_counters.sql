-- Counters for /metrics, kept by triggers in the statement that changes the counted rows, so a
-- scrape reads this small table (a few rows per label and shard) instead of scanning runs, pages
-- and generations (store/metrics.rs).
--
-- | metric | label | label2 | value |
-- |---|---|---|---|
-- | runs, pages | stored status | '' | rows in that status now (a gauge) |
-- | generations | provider | outcome | generations recorded (a counter) |
-- | cache_hits | '' | '' | generations served from the page cache |
-- | cache_lookups | what the cache did | '' | generations by lookup result |
-- | model_calls | provider | '' | generations not served from the cache |
-- | tokens_in, tokens_out, latency_ms | provider | '' | their sums over those |
-- | latency_bucket | provider | upper bound in ms, or +Inf | those in that bucket (not cumulative) |
--
-- The latency bounds are `store::metrics::LATENCY_BOUNDS_MS`; change both together.
-- Counters only grow: deleting generations does not take them back. Status gauges follow every
-- insert, status change and delete.
--
-- A counter row stays locked until the transaction that changed it commits, so every run
-- transition in every process would queue on one row: each connection adds into its own of 16
-- shards (`pg_backend_pid() % 16`) and a scrape sums them. The triggers are per statement (a
-- statement's changes are summed first, through its transition tables) and add in key order, so
-- two transactions always take counter rows in the same order and cannot deadlock on them; a
-- statement that changes no status (a heartbeat, a state write) takes no counter row at all.
CREATE TABLE metric_counters (
    metric  TEXT NOT NULL,
    label   TEXT NOT NULL DEFAULT '',
    label2  TEXT NOT NULL DEFAULT '',
    shard   INTEGER NOT NULL DEFAULT 0,
    value   BIGINT NOT NULL,
    PRIMARY KEY (metric, label, label2, shard)
);

INSERT INTO metric_counters (metric, label, value)
SELECT 'runs', status, COUNT(*) FROM runs GROUP BY status;
INSERT INTO metric_counters (metric, label, value)
SELECT 'pages', status, COUNT(*) FROM pages GROUP BY status;
INSERT INTO metric_counters (metric, label, label2, value)
SELECT 'generations', provider, outcome, COUNT(*) FROM generations GROUP BY provider, outcome;
INSERT INTO metric_counters (metric, value)
SELECT 'cache_hits', COUNT(*) FROM generations WHERE cache_hit;
INSERT INTO metric_counters (metric, label, value)
SELECT 'cache_lookups', cache_lookup, COUNT(*) FROM generations
WHERE cache_lookup IS NOT NULL GROUP BY cache_lookup;
INSERT INTO metric_counters (metric, label, value)
SELECT 'model_calls', provider, COUNT(*) FROM generations WHERE NOT cache_hit GROUP BY provider;
INSERT INTO metric_counters (metric, label, value)
SELECT 'tokens_in', provider, SUM(tokens_in) FROM generations WHERE NOT cache_hit GROUP BY provider;
INSERT INTO metric_counters (metric, label, value)
SELECT 'tokens_out', provider, SUM(tokens_out) FROM generations WHERE NOT cache_hit GROUP BY provider;
INSERT INTO metric_counters (metric, label, value)
SELECT 'latency_ms', provider, SUM(latency_ms) FROM generations WHERE NOT cache_hit GROUP BY provider;

CREATE FUNCTION tessera_latency_bucket(latency_ms BIGINT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN latency_ms <= 100 THEN '100' WHEN latency_ms <= 250 THEN '250'
        WHEN latency_ms <= 500 THEN '500' WHEN latency_ms <= 1000 THEN '1000'
        WHEN latency_ms <= 2500 THEN '2500' WHEN latency_ms <= 5000 THEN '5000'
        WHEN latency_ms <= 10000 THEN '10000' WHEN latency_ms <= 30000 THEN '30000'
        WHEN latency_ms <= 60000 THEN '60000' ELSE '+Inf' END
$$;

INSERT INTO metric_counters (metric, label, label2, value)
SELECT 'latency_bucket', provider, tessera_latency_bucket(latency_ms), COUNT(*)
FROM generations WHERE NOT cache_hit GROUP BY provider, tessera_latency_bucket(latency_ms);

-- Runs and pages by status: TG_ARGV[0] names the metric; the table's `status` column is counted.
CREATE FUNCTION tessera_count_statuses() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO metric_counters (metric, label, shard, value)
        SELECT TG_ARGV[0], status, pg_backend_pid() % 16, COUNT(*)
        FROM new_rows GROUP BY status ORDER BY status
        ON CONFLICT (metric, label, label2, shard)
        DO UPDATE SET value = metric_counters.value + excluded.value;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO metric_counters (metric, label, shard, value)
        SELECT TG_ARGV[0], status, pg_backend_pid() % 16, SUM(delta)
        FROM (SELECT status, 1 AS delta FROM new_rows
              UNION ALL SELECT status, -1 FROM old_rows) AS changes
        GROUP BY status HAVING SUM(delta) <> 0 ORDER BY status
        ON CONFLICT (metric, label, label2, shard)
        DO UPDATE SET value = metric_counters.value + excluded.value;
    ELSE
        INSERT INTO metric_counters (metric, label, shard, value)
        SELECT TG_ARGV[0], status, pg_backend_pid() % 16, -COUNT(*)
        FROM old_rows GROUP BY status ORDER BY status
        ON CONFLICT (metric, label, label2, shard)
        DO UPDATE SET value = metric_counters.value + excluded.value;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER runs_counted_on_insert AFTER INSERT ON runs
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('runs');
CREATE TRIGGER runs_counted_on_update AFTER UPDATE ON runs
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('runs');
CREATE TRIGGER runs_counted_on_delete AFTER DELETE ON runs
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('runs');

CREATE TRIGGER pages_counted_on_insert AFTER INSERT ON pages
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('pages');
CREATE TRIGGER pages_counted_on_update AFTER UPDATE ON pages
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('pages');
CREATE TRIGGER pages_counted_on_delete AFTER DELETE ON pages
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_statuses('pages');

CREATE FUNCTION tessera_count_generations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO metric_counters (metric, label, label2, shard, value)
    SELECT metric, label, label2, pg_backend_pid() % 16, SUM(value) FROM (
        SELECT 'generations' AS metric, provider AS label, outcome AS label2, 1::BIGINT AS value
        FROM new_rows
        UNION ALL SELECT 'cache_lookups', cache_lookup, '', 1 FROM new_rows
        WHERE cache_lookup IS NOT NULL
        UNION ALL SELECT 'cache_hits', '', '', 1 FROM new_rows WHERE cache_hit
        UNION ALL SELECT 'model_calls', provider, '', 1 FROM new_rows WHERE NOT cache_hit
        UNION ALL SELECT 'tokens_in', provider, '', tokens_in FROM new_rows WHERE NOT cache_hit
        UNION ALL SELECT 'tokens_out', provider, '', tokens_out FROM new_rows WHERE NOT cache_hit
        UNION ALL SELECT 'latency_ms', provider, '', latency_ms FROM new_rows WHERE NOT cache_hit
        UNION ALL SELECT 'latency_bucket', provider, tessera_latency_bucket(latency_ms), 1
        FROM new_rows WHERE NOT cache_hit
    ) AS figures
    GROUP BY metric, label, label2 ORDER BY metric, label, label2
    ON CONFLICT (metric, label, label2, shard)
    DO UPDATE SET value = metric_counters.value + excluded.value;
    RETURN NULL;
END;
$$;

CREATE TRIGGER generations_counted AFTER INSERT ON generations
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tessera_count_generations();
