-- 003_comparison_key.sql: idempotent comparisons.
--
-- A comparison is a pure function of (project, run pairs, policy): runs are
-- immutable, and the history its z-scores read is baseline runs with an id
-- below the candidate's, which cannot change once the candidate is stored.
-- gate::service::compare stores the hex SHA-256 of a canonical encoding of
-- those inputs as request_key and, when the same request comes again (a CI
-- retry, or the same compare from several jobs), returns the stored report
-- with the same comparison id instead of computing and storing it again.
--
-- Rows written before this migration keep request_key NULL: SQLite treats
-- NULLs as distinct in a UNIQUE index, so they stay valid and are simply
-- never found by key.

ALTER TABLE comparisons ADD COLUMN request_key TEXT
    CHECK (request_key IS NULL OR length(request_key) = 64);

CREATE UNIQUE INDEX comparisons_request_key ON comparisons (project_id, request_key);
