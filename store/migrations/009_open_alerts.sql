-- 009_open_alerts.sql: the open alerts of a compare's series, by index.
--
-- Every fresh compare reads the untriaged and acknowledged alerts of each
-- benchmark's series on the candidate's testbed and the baseline's branch
-- (the report's history context, store::open_alerts). alerts_project
-- (project_id, status, id) could not serve that read: it walked every open
-- alert of the project. This index holds only open alerts (a partial
-- index: triaged-away ones leave it when their status changes), so the read
-- is one range of a benchmark's series, newest first, however many alerts
-- the project has triaged over the years.
CREATE INDEX alerts_open ON alerts (benchmark_id, testbed_id, branch, id)
    WHERE status IN ('untriaged', 'acknowledged');
