-- pg/012_run_toolchains.sql: SQLite's 016_run_toolchains.sql (the toolchain
-- key of a run's program; '' unknown, never reused as a baseline).
ALTER TABLE runs ADD COLUMN toolchain text NOT NULL DEFAULT '' CHECK (length(toolchain) <= 256);
