-- pg/008_run_sessions.sql: SQLite's 012_run_sessions.sql (the measurement
-- session of a run: runs of one perfgate run share it).
ALTER TABLE runs ADD COLUMN session text;
