-- pg/014_mainline_runs.sql: SQLite's 018_mainline_runs.sql (which runs feed
-- their branch's series; runs stored before: a baseline without a pull
-- request number, as they fed it before).
ALTER TABLE runs ADD COLUMN mainline bigint NOT NULL DEFAULT 0 CHECK (mainline IN (0, 1));
ALTER TABLE summaries ADD COLUMN mainline bigint NOT NULL DEFAULT 0 CHECK (mainline IN (0, 1));
UPDATE runs SET mainline = 1 WHERE role = 'baseline' AND pr IS NULL;
UPDATE summaries SET mainline = 1 WHERE run_id IN (SELECT id FROM runs WHERE mainline = 1);

DROP INDEX summaries_history;
DROP INDEX summaries_history_branch;
DROP INDEX summaries_history_testbed;
CREATE INDEX summaries_history ON summaries (benchmark_id, counter_id, created_at, run_id)
    INCLUDE (branch, testbed_id, role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;
CREATE INDEX summaries_history_branch ON summaries (benchmark_id, counter_id, branch, created_at, run_id)
    INCLUDE (testbed_id, role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;
CREATE INDEX summaries_history_testbed ON summaries (benchmark_id, counter_id, testbed_id, branch, created_at, run_id)
    INCLUDE (role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;
