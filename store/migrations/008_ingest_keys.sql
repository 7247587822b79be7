-- 008_ingest_keys.sql: idempotent uploads (the HTTP API's Idempotency-Key).
--
-- A client that retries an upload after a timeout does not know whether the
-- first attempt was stored. It sends the same Idempotency-Key with every
-- attempt; store::insert_run stores the run once, records the key with the
-- SHA-256 of the request it came with, and answers a repeat with the first
-- run's id. The same key with another request is refused (HTTP 409).
--
-- (Number 007 belongs to another change made at the same time; SQLite
-- versions follow the file numbers, see schema/CMakeLists.txt.)
--
-- run_id is NULL only inside the transaction that claims the key: it inserts
-- the key first, so that a concurrent claim of the same key waits for it
-- (PostgreSQL) or for the write lock (SQLite), then stores the run.
-- Keys are kept as long as their runs (one small row per upload).

CREATE TABLE ingest_keys (
    project_id     INTEGER NOT NULL REFERENCES projects(id),
    key            TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_sha256 TEXT NOT NULL CHECK (length(request_sha256) = 64),
    run_id         INTEGER REFERENCES runs(id),
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (project_id, key)
) WITHOUT ROWID;
