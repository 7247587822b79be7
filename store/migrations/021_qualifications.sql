-- 021_qualifications.sql: perfgate qualify's figures stored for a testbed
-- and benchmark (issue 46, "Stored and shown"; docs/http-api.md
-- "Qualifications"). Each qualify run is a row; readers take the newest of a
-- (testbed_fingerprint, benchmark), older ones stay as the record.
--
-- testbed_fingerprint: model::testbed_info::fingerprint, the history's key of
-- the machine; testbed: its name as shown. qualified_at: unix seconds, when
-- qualify finished; stored_at: when the store took it. token_id/token_name:
-- the server token that stored it (NULL: the CLI on a database). The texts'
-- limits are model::max_qualification_text_bytes (the service checks them
-- first and names the field).
CREATE TABLE qualifications (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id          INTEGER NOT NULL REFERENCES projects(id),
    testbed_fingerprint TEXT NOT NULL CHECK (length(testbed_fingerprint) BETWEEN 1 AND 512),
    testbed             TEXT NOT NULL CHECK (length(testbed) <= 512),
    benchmark           TEXT NOT NULL CHECK (length(benchmark) BETWEEN 1 AND 512),
    backend             TEXT NOT NULL CHECK (length(backend) BETWEEN 1 AND 512),
    qualified_at        INTEGER NOT NULL,
    stored_at           INTEGER NOT NULL,
    token_id            INTEGER,
    token_name          TEXT
);
-- The newest of a testbed and benchmark, and a project's list.
CREATE INDEX qualifications_key ON qualifications (project_id, testbed_fingerprint, benchmark, id);
-- One row per gated counter of a qualification (at most
-- model::max_qualified_counters). detects_80_pct/detects_95_pct: the
-- smallest injected slowdown (% of the counter's median) caught in 80%/95%
-- of gates, NULL when none tried was; reaches_threshold, deterministic: 0/1.
CREATE TABLE qualification_counters (
    qualification_id  INTEGER NOT NULL REFERENCES qualifications(id),
    counter           TEXT NOT NULL CHECK (length(counter) BETWEEN 1 AND 512),
    threshold_pct     REAL NOT NULL,
    detects_80_pct    REAL,
    detects_95_pct    REAL,
    reaches_threshold INTEGER NOT NULL CHECK (reaches_threshold IN (0, 1)),
    deterministic     INTEGER NOT NULL CHECK (deterministic IN (0, 1)),
    PRIMARY KEY (qualification_id, counter)
);
