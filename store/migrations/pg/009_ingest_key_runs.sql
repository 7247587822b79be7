-- pg/009_ingest_key_runs.sql: idempotent uploads of many runs at once;
-- SQLite's 013_ingest_key_runs.sql (the comments there say how it is used).
ALTER TABLE ingest_keys ADD COLUMN run_ids text;
