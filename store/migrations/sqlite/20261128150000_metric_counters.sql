-- Counters for /metrics, kept by triggers in the statement that changes the counted rows, so a
-- scrape reads this small table (a few rows per label) instead of scanning runs, pages and
-- generations (store/metrics.rs). SQLite has one writer at a time: every counter is shard 0.
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
CREATE TABLE metric_counters (
    metric  TEXT NOT NULL,
    label   TEXT NOT NULL DEFAULT '',
    label2  TEXT NOT NULL DEFAULT '',
    shard   INTEGER NOT NULL DEFAULT 0,
    value   INTEGER NOT NULL,
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
INSERT INTO metric_counters (metric, label, label2, value)
SELECT 'latency_bucket', provider, bucket, COUNT(*) FROM (
    SELECT provider, CASE
        WHEN latency_ms <= 100 THEN '100' WHEN latency_ms <= 250 THEN '250'
        WHEN latency_ms <= 500 THEN '500' WHEN latency_ms <= 1000 THEN '1000'
        WHEN latency_ms <= 2500 THEN '2500' WHEN latency_ms <= 5000 THEN '5000'
        WHEN latency_ms <= 10000 THEN '10000' WHEN latency_ms <= 30000 THEN '30000'
        WHEN latency_ms <= 60000 THEN '60000' ELSE '+Inf' END AS bucket
    FROM generations WHERE NOT cache_hit
) AS latencies GROUP BY provider, bucket;

CREATE TRIGGER runs_counted_on_insert AFTER INSERT ON runs
BEGIN
    INSERT INTO metric_counters (metric, label, value) VALUES ('runs', NEW.status, 1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER runs_counted_on_status AFTER UPDATE OF status ON runs
WHEN OLD.status <> NEW.status
BEGIN
    INSERT INTO metric_counters (metric, label, value)
    VALUES ('runs', OLD.status, -1), ('runs', NEW.status, 1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER runs_counted_on_delete AFTER DELETE ON runs
BEGIN
    INSERT INTO metric_counters (metric, label, value) VALUES ('runs', OLD.status, -1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER pages_counted_on_insert AFTER INSERT ON pages
BEGIN
    INSERT INTO metric_counters (metric, label, value) VALUES ('pages', NEW.status, 1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER pages_counted_on_status AFTER UPDATE OF status ON pages
WHEN OLD.status <> NEW.status
BEGIN
    INSERT INTO metric_counters (metric, label, value)
    VALUES ('pages', OLD.status, -1), ('pages', NEW.status, 1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER pages_counted_on_delete AFTER DELETE ON pages
BEGIN
    INSERT INTO metric_counters (metric, label, value) VALUES ('pages', OLD.status, -1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;

CREATE TRIGGER generations_counted AFTER INSERT ON generations
BEGIN
    INSERT INTO metric_counters (metric, label, label2, value)
    VALUES ('generations', NEW.provider, NEW.outcome, 1)
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
    INSERT INTO metric_counters (metric, label, value)
    SELECT 'cache_lookups', NEW.cache_lookup, 1 WHERE NEW.cache_lookup IS NOT NULL
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
    INSERT INTO metric_counters (metric, value)
    SELECT 'cache_hits', 1 WHERE NEW.cache_hit
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
    INSERT INTO metric_counters (metric, label, label2, value)
    SELECT metric, NEW.provider, label2, value FROM (
        SELECT 'model_calls' AS metric, '' AS label2, 1 AS value
        UNION ALL SELECT 'tokens_in', '', NEW.tokens_in
        UNION ALL SELECT 'tokens_out', '', NEW.tokens_out
        UNION ALL SELECT 'latency_ms', '', NEW.latency_ms
        UNION ALL SELECT 'latency_bucket', CASE
            WHEN NEW.latency_ms <= 100 THEN '100' WHEN NEW.latency_ms <= 250 THEN '250'
            WHEN NEW.latency_ms <= 500 THEN '500' WHEN NEW.latency_ms <= 1000 THEN '1000'
            WHEN NEW.latency_ms <= 2500 THEN '2500' WHEN NEW.latency_ms <= 5000 THEN '5000'
            WHEN NEW.latency_ms <= 10000 THEN '10000' WHEN NEW.latency_ms <= 30000 THEN '30000'
            WHEN NEW.latency_ms <= 60000 THEN '60000' ELSE '+Inf' END, 1
    ) AS figures WHERE NOT NEW.cache_hit
    ON CONFLICT (metric, label, label2, shard) DO UPDATE SET value = value + excluded.value;
END;
