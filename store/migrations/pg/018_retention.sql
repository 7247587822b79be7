-- pg/018_retention.sql: SQLite's 022_retention.sql (a project's retention
-- ages and the last daily prune; the indexes the prune reads through).
ALTER TABLE projects
    ADD COLUMN retention_older_than bigint
        CHECK (retention_older_than IS NULL OR retention_older_than BETWEEN 86400 AND 3153600000),
    ADD COLUMN retention_thin_after bigint
        CHECK (retention_thin_after IS NULL OR (retention_older_than IS NOT NULL
                                                AND retention_thin_after BETWEEN retention_older_than AND 3153600000)),
    ADD COLUMN retention_pruned_at bigint;
CREATE INDEX runs_retention ON runs (project_id, mainline, created_at);
CREATE INDEX comparisons_baseline ON comparisons (baseline_run);
