-- 016_run_toolchains.sql: the toolchain that built a run's program
-- (issue 33, item 2; docs/history.md "Toolchain key").
--
-- perfgate run records a key of the compiler identification and flags of
-- the benchmark's executable (runner/toolchain.hpp) or the --toolchain text.
-- A deterministic backend's run (callgrind, memcheck) of a commit is reused
-- as a later baseline only with the same key; '' (runs stored before this
-- migration, scripts, uploads without one) is unknown and never reused. The
-- lookup (store::find_reusable_run) reads runs_project_sha (006).
ALTER TABLE runs ADD COLUMN toolchain TEXT NOT NULL DEFAULT '' CHECK (length(toolchain) <= 256);
