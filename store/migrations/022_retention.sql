-- 022_retention.sql: retention (issue 47; docs/history.md "Retention").
--
-- perfgate db prune and the server's daily prune remove what the history
-- does not need: runs that feed no series (pull requests' runs, push jobs'
-- baselines) older than an age, their comparisons and artifacts, and thin
-- the runs that do to one a day past a second age (store/prune.hpp).
--
-- projects.retention_older_than / retention_thin_after: a project's ages in
-- seconds (`perfgate project --retention 90d --thin-after 365d`); NULL: no
-- retention (nothing is removed by the server). retention_pruned_at: unix
-- seconds of the last daily prune a server started for the project: each
-- replica claims the day's prune by moving it (one UPDATE), so that several
-- replicas on one database prune a project once a day.
ALTER TABLE projects ADD COLUMN retention_older_than INTEGER
    CHECK (retention_older_than IS NULL OR retention_older_than BETWEEN 86400 AND 3153600000);
ALTER TABLE projects ADD COLUMN retention_thin_after INTEGER
    CHECK (retention_thin_after IS NULL OR (retention_older_than IS NOT NULL
                                            AND retention_thin_after BETWEEN retention_older_than AND 3153600000));
ALTER TABLE projects ADD COLUMN retention_pruned_at INTEGER;

-- The prune's reads: a project's runs by whether they feed a series and by
-- age (a range, not a scan of every run and its environment text), and a
-- run's comparisons as the baseline (comparisons_candidate, 017, serves the
-- candidate side), so that deleting a batch of runs finds their
-- comparisons without reading all of them.
CREATE INDEX runs_retention ON runs (project_id, mainline, created_at);
CREATE INDEX comparisons_baseline ON comparisons (baseline_run);
