-- pg/007_run_sessions.sql: SQLite's 011_run_sessions.sql (the measurement
-- session of a run: runs of one perfgate run share it).
ALTER TABLE runs ADD COLUMN session text;
