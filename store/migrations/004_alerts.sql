-- 004_alerts.sql: change points of the stored history and their alerts.
--
-- A series is (benchmark, counter, testbed, branch) within a project: the
-- per-run medians of the baseline runs of the project's baseline branch
-- (projects.baseline_branch), in (created_at, run_id) order. gate::service
-- re-runs detection over a series's tail after storing such a run and
-- replaces the tail's rows in change_points; rows before the tail stay as
-- they were found.

ALTER TABLE projects ADD COLUMN baseline_branch TEXT NOT NULL DEFAULT 'main'
    CHECK (length(baseline_branch) > 0);

-- One row per change point: run_id is the first run of the new segment. A
-- run belongs to exactly one series per counter, so (run_id, counter_id) is
-- the key; the series columns are copied so that a series is one index range.
CREATE TABLE change_points (
    run_id        INTEGER NOT NULL REFERENCES runs(id),
    counter_id    INTEGER NOT NULL REFERENCES counters(id),
    benchmark_id  INTEGER NOT NULL REFERENCES benchmarks(id),
    testbed_id    INTEGER NOT NULL REFERENCES testbeds(id),
    branch        TEXT NOT NULL,
    p_value       REAL NOT NULL,
    mean_before   REAL NOT NULL,
    mean_after    REAL NOT NULL,
    median_before REAL NOT NULL,
    median_after  REAL NOT NULL,
    delta_pct     REAL,                  -- NULL when mean_before is 0
    shift         REAL NOT NULL,
    shift_lower   REAL NOT NULL,
    shift_upper   REAL NOT NULL,
    PRIMARY KEY (run_id, counter_id)
) WITHOUT ROWID;
CREATE INDEX change_points_series ON change_points (benchmark_id, counter_id, testbed_id, branch, run_id);

-- An alert: a change point in the counter's worse direction, and its triage.
-- run_id follows the change point when later data moves it by a point or
-- two (same alert); the numbers are those of the latest detection.
CREATE TABLE alerts (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id),
    benchmark_id  INTEGER NOT NULL REFERENCES benchmarks(id),
    counter_id    INTEGER NOT NULL REFERENCES counters(id),
    testbed_id    INTEGER NOT NULL REFERENCES testbeds(id),
    branch        TEXT NOT NULL,
    run_id        INTEGER NOT NULL REFERENCES runs(id),
    p_value       REAL NOT NULL,
    mean_before   REAL NOT NULL,
    mean_after    REAL NOT NULL,
    median_before REAL NOT NULL,
    median_after  REAL NOT NULL,
    delta_pct     REAL,
    shift         REAL NOT NULL,
    shift_lower   REAL NOT NULL,
    shift_upper   REAL NOT NULL,
    status        TEXT NOT NULL DEFAULT 'untriaged'
                  CHECK (status IN ('untriaged', 'acknowledged', 'invalid', 'wontfix', 'fixed')),
    note          TEXT NOT NULL DEFAULT '',
    changed_by    TEXT NOT NULL DEFAULT '',
    changed_at    INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX alerts_series ON alerts (benchmark_id, counter_id, testbed_id, branch, run_id);
CREATE INDEX alerts_project ON alerts (project_id, status, id);
