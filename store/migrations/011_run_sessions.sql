-- 011_run_sessions.sql: the measurement session of a run.
--
-- perfgate run measures a benchmark's baseline and candidate interleaved,
-- in one session, and stores both runs with the same session id; a compare
-- of two runs of one session is a comparison of interleaved runs, any other
-- pair is not and is judged against the testbed's between-run variation
-- (docs/statistics.md "Runs not measured interleaved"). NULL: unknown
-- (uploads without one, runs stored before this migration): not interleaved.
ALTER TABLE runs ADD COLUMN session TEXT;
