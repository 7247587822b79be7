-- 001_initial.sql: the tables of the perfgate store.
--
-- Applied once, inside a transaction, by schema/store.cpp; afterwards
-- PRAGMA user_version = 1. Never edit a released migration: add a new file.
--
-- Ids are INTEGER PRIMARY KEY (the rowid). Names are stored verbatim and only
-- ever reach SQL as bound parameters.

CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    created_at  INTEGER NOT NULL
);

-- API tokens are stored as the hex SHA-256 of the token; the token itself is
-- shown once by `perfgate token create` and never stored.
CREATE TABLE api_tokens (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id),
    name        TEXT NOT NULL,
    sha256      TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
    created_at  INTEGER NOT NULL
);

-- A machine. fingerprint is the identity (a stable hash of cpu, cores, kernel
-- and name, computed by the runner, or by the store when it is empty).
CREATE TABLE testbeds (
    id          INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    cpu         TEXT NOT NULL,
    cores       INTEGER NOT NULL,
    kernel      TEXT NOT NULL
);
CREATE INDEX testbeds_name ON testbeds (name);

-- runs / last_run_at are maintained by the ingest transaction so that
-- listing benchmarks and counting runs never scans the runs table.
CREATE TABLE benchmarks (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id),
    name        TEXT NOT NULL CHECK (length(name) > 0),
    runs        INTEGER NOT NULL DEFAULT 0,
    last_run_at INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, name)
);

-- Counter names as perf prints them ("task-clock", "cycles:u", "cpu_core/cycles/").
CREATE TABLE counters (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) > 0)
);

-- Which counters a benchmark has ever reported.
CREATE TABLE benchmark_counters (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id),
    counter_id   INTEGER NOT NULL REFERENCES counters(id),
    PRIMARY KEY (benchmark_id, counter_id)
) WITHOUT ROWID;

CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects(id),
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id),
    testbed_id   INTEGER NOT NULL REFERENCES testbeds(id),
    role         TEXT NOT NULL CHECK (role IN ('baseline', 'candidate')),
    git_sha      TEXT NOT NULL,
    branch       TEXT NOT NULL,
    pr           INTEGER,
    backend      TEXT NOT NULL,
    environment  TEXT NOT NULL,          -- check-env JSON, verbatim
    summary_only INTEGER NOT NULL CHECK (summary_only IN (0, 1)),
    created_at   INTEGER NOT NULL        -- unix seconds
);

-- One row per repetition and counter. value NULL is absent data
-- (<not supported> / <not counted>), never zero.
CREATE TABLE samples (
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    counter_id   INTEGER NOT NULL REFERENCES counters(id),
    repetition   INTEGER NOT NULL CHECK (repetition >= 0),
    value        REAL,
    pcnt_running REAL NOT NULL,
    variance_pct REAL,                   -- perf stat -r aggregates only
    PRIMARY KEY (run_id, counter_id, repetition)
) WITHOUT ROWID;

-- One row per run and counter, computed at ingest (stats::summarize). n = 0
-- (every repetition absent) leaves the statistics NULL.
--
-- benchmark_id .. created_at copy the run's columns that the history query
-- filters on and returns, so that it is answered from one covering index of
-- this table alone (see 002_history_indexes.sql).
CREATE TABLE summaries (
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    counter_id   INTEGER NOT NULL REFERENCES counters(id),
    ordinal      INTEGER NOT NULL,       -- position of the counter in the run
    unit         TEXT NOT NULL,
    benchmark_id INTEGER NOT NULL,
    testbed_id   INTEGER NOT NULL,
    branch       TEXT NOT NULL,
    role         TEXT NOT NULL,
    git_sha      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    n            INTEGER NOT NULL CHECK (n >= 0),
    median       REAL,
    mean         REAL,
    stddev       REAL,
    cov          REAL,
    min          REAL,
    max          REAL,
    PRIMARY KEY (run_id, counter_id)
) WITHOUT ROWID;

CREATE TABLE comparisons (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id),
    baseline_run  INTEGER NOT NULL REFERENCES runs(id),
    candidate_run INTEGER NOT NULL REFERENCES runs(id),
    report        TEXT NOT NULL,         -- report JSON, verbatim
    created_at    INTEGER NOT NULL
);
