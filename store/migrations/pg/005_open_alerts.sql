-- pg/005_open_alerts.sql: SQLite's 009_open_alerts.sql (the open alerts of a
-- compare's series, by a partial index).
CREATE INDEX alerts_open ON alerts (benchmark_id, testbed_id, branch, id)
    WHERE status IN ('untriaged', 'acknowledged');
