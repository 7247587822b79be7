-- 018_mainline_runs.sql: which runs feed their branch's series (issue 44,
-- item 8; docs/history.md "Which runs feed the series").
--
-- A pull request's job measures its merge-base as the baseline and labels
-- it with the base branch: such a run landed in the base branch's series,
-- watch, band and baseline reuse. A run now says whether it feeds its
-- branch's series (runs.mainline, copied into summaries for the history's
-- covering indexes): perfgate run marks the candidate of a push to the
-- branch, an upload says so in its `mainline` field.
--
-- Runs stored before: a baseline run without a pull request number is
-- mainline, as it fed the series before; a pull request's baseline (pr set)
-- no longer does; candidates never did.
ALTER TABLE runs ADD COLUMN mainline INTEGER NOT NULL DEFAULT 0 CHECK (mainline IN (0, 1));
ALTER TABLE summaries ADD COLUMN mainline INTEGER NOT NULL DEFAULT 0 CHECK (mainline IN (0, 1));
UPDATE runs SET mainline = 1 WHERE role = 'baseline' AND pr IS NULL;
UPDATE summaries SET mainline = 1 WHERE run_id IN (SELECT id FROM runs WHERE mainline = 1);

-- The three covering indexes of 005_history_minmax.sql with mainline after
-- role: the history query filters on it and still reads the index alone.
DROP INDEX summaries_history;
DROP INDEX summaries_history_branch;
DROP INDEX summaries_history_testbed;

CREATE INDEX summaries_history ON summaries
    (benchmark_id, counter_id, created_at, run_id,
     branch, testbed_id, role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;

CREATE INDEX summaries_history_branch ON summaries
    (benchmark_id, counter_id, branch, created_at, run_id,
     testbed_id, role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;

CREATE INDEX summaries_history_testbed ON summaries
    (benchmark_id, counter_id, testbed_id, branch, created_at, run_id,
     role, mainline, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;
