-- 005_history_minmax.sql: history points carry min, max and the testbed.
--
-- A history chart draws each run's range as whiskers (min, max) and one line
-- per testbed. The summaries table has had min, max and testbed_id since
-- 001_initial.sql; the history query now returns them as well, so the three
-- covering indexes of 002_history_indexes.sql gain min and max (testbed_id
-- is in all three already) to keep the query answered from the index alone.
-- Same names, same key order and partial condition: only the trailing
-- columns differ, so history_sql.hpp's INDEXED BY still names them.

DROP INDEX summaries_history;
DROP INDEX summaries_history_branch;
DROP INDEX summaries_history_testbed;

CREATE INDEX summaries_history ON summaries
    (benchmark_id, counter_id, created_at, run_id,
     branch, testbed_id, role, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;

CREATE INDEX summaries_history_branch ON summaries
    (benchmark_id, counter_id, branch, created_at, run_id,
     testbed_id, role, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;

CREATE INDEX summaries_history_testbed ON summaries
    (benchmark_id, counter_id, testbed_id, branch, created_at, run_id,
     role, git_sha, n, median, mean, stddev, cov, min, max)
    WHERE n > 0;
