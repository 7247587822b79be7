-- pg/002_ingest_keys.sql: idempotent uploads; SQLite's 008_ingest_keys.sql
-- (the comments there say how the table is used).

CREATE TABLE ingest_keys (
    project_id     bigint NOT NULL REFERENCES projects(id),
    key            text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_sha256 text NOT NULL CHECK (length(request_sha256) = 64),
    run_id         bigint REFERENCES runs(id),
    created_at     bigint NOT NULL,
    PRIMARY KEY (project_id, key)
);
