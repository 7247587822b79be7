-- 002_history_indexes.sql: covering indexes for the history query.
--
-- store::history asks for the most recent k summaries of one (benchmark,
-- counter), optionally restricted to a branch and a testbed, newest first.
-- Each index below holds every column that query filters on or returns, in
-- an order where the equality filters come first and created_at next, so
-- SQLite answers with one B-tree descent and a backward range scan of k
-- entries: O(log n + k), never touching the summaries rows or samples.
--   summaries_history          no branch filter (testbed, role: residual)
--   summaries_history_branch   branch = ?
--   summaries_history_testbed  testbed = ? AND branch = ? (the gate's z-score query)
-- They are partial (n > 0): counters that never had a value (cycles on a VM
-- without a PMU) are not history and do not cost index space.

CREATE INDEX summaries_history ON summaries
    (benchmark_id, counter_id, created_at, run_id,
     branch, testbed_id, role, git_sha, n, median, mean, stddev, cov)
    WHERE n > 0;

CREATE INDEX summaries_history_branch ON summaries
    (benchmark_id, counter_id, branch, created_at, run_id,
     testbed_id, role, git_sha, n, median, mean, stddev, cov)
    WHERE n > 0;

CREATE INDEX summaries_history_testbed ON summaries
    (benchmark_id, counter_id, testbed_id, branch, created_at, run_id,
     role, git_sha, n, median, mean, stddev, cov)
    WHERE n > 0;
