-- 006_project_settings.sql: what the dashboard lists and links.
--
-- projects.repository_url: where a project's commits are browsed, so that a
-- page can link a run's git sha as {repository_url}/commit/{sha}. NULL until
-- `perfgate project --repository-url` sets it; gate::service validates it
-- (an absolute http(s) URL without a trailing '/').
ALTER TABLE projects ADD COLUMN repository_url TEXT
    CHECK (repository_url IS NULL OR length(repository_url) BETWEEN 1 AND 512);

-- A comparison's verdict and number of benchmarks, copied from its report
-- (the report's top-level "verdict" and the length of "benchmarks") when it
-- is stored, so that listing the recent comparisons reads one index and
-- never a report (up to a few MB each). NULL when the stored report does not
-- say (a report is stored verbatim; perfgate's always do).
ALTER TABLE comparisons ADD COLUMN verdict TEXT
    CHECK (verdict IS NULL OR verdict IN ('pass', 'fail', 'inconclusive'));
ALTER TABLE comparisons ADD COLUMN benchmark_count INTEGER
    CHECK (benchmark_count IS NULL OR benchmark_count >= 0);

-- The rows stored before this migration: read from their reports once, with
-- the same expressions as store::insert_comparison uses.
UPDATE comparisons SET
    verdict = CASE WHEN json_valid(report)
                    AND json_extract(report, '$.verdict') IN ('pass', 'fail', 'inconclusive')
                   THEN json_extract(report, '$.verdict') END,
    benchmark_count = CASE WHEN json_valid(report) AND json_type(report, '$.benchmarks') = 'array'
                           THEN json_array_length(report, '$.benchmarks') END;

-- store::recent_comparisons: a project's newest comparisons, newest first
-- (id order). A covering index: the query walks it backwards from the end
-- of the project's range and stops after `limit` entries, O(log n + limit),
-- without touching the comparisons rows and their reports.
CREATE INDEX comparisons_recent ON comparisons
    (project_id, id, created_at, verdict, benchmark_count, baseline_run, candidate_run);

-- store::runs_by_sha: a project's runs whose git sha starts with a prefix,
-- newest per (sha, benchmark, testbed). The prefix is an index range of
-- git_sha; benchmark_id, testbed_id and the rowid (the run id) make it
-- covering and already grouped.
CREATE INDEX runs_project_sha ON runs (project_id, git_sha, benchmark_id, testbed_id);
