-- 013_ingest_key_runs.sql: idempotent uploads of many runs at once.
--
-- One upload of a benchmark harness's output (a google/benchmark suite)
-- stores one run per benchmark, all in one transaction. Its Idempotency-Key
-- must answer a repeat with every one of those runs: run_ids lists them,
-- comma-separated, in the order stored (run_id is the first). NULL for an
-- upload of one run, whose run_id says it all.
ALTER TABLE ingest_keys ADD COLUMN run_ids TEXT;
