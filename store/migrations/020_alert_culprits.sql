-- 020_alert_culprits.sql: what `perfgate bisect --alert` found, stored on
-- the alert (issue 45, item 4; docs/bisect.md "Stored on the alert").
--
-- One result per alert, the newest: bisecting again replaces it (its
-- commits and effects with it). status: found (every part of the change
-- has its commit), undecided (a range is left: detail names it) or
-- no_change (the range's ends measure alike). good_sha / bad_sha: the range
-- bisected, (good, bad]; commits: in the range, bad included; steps: the
-- decisions taken; builds: commits built. stored_at: unix seconds.
-- token_id / token_name: the server token that wrote it, as runs and
-- acceptances record it (019_token_scopes.sql); NULL for the CLI on a
-- database. The texts are checked by the service (model/alert.hpp limits).
CREATE TABLE alert_culprits (
    alert_id   INTEGER PRIMARY KEY REFERENCES alerts(id) ON DELETE CASCADE,
    status     TEXT NOT NULL CHECK (status IN ('found', 'undecided', 'no_change')),
    backend    TEXT NOT NULL,
    counter    TEXT NOT NULL,
    good_sha   TEXT NOT NULL CHECK (length(good_sha) BETWEEN 7 AND 64),
    bad_sha    TEXT NOT NULL CHECK (length(bad_sha) BETWEEN 7 AND 64),
    commits    INTEGER NOT NULL CHECK (commits >= 0),
    steps      INTEGER NOT NULL CHECK (steps >= 0),
    builds     INTEGER NOT NULL CHECK (builds >= 0),
    detail     TEXT NOT NULL DEFAULT '',
    stored_at  INTEGER NOT NULL,
    token_id   INTEGER,
    token_name TEXT
);
-- The culprit commits of a result, in the report's order (position 0..).
CREATE TABLE alert_culprit_commits (
    alert_id INTEGER NOT NULL REFERENCES alert_culprits(alert_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    sha      TEXT NOT NULL CHECK (length(sha) BETWEEN 7 AND 64),
    subject  TEXT NOT NULL,
    author   TEXT NOT NULL,
    share    REAL NOT NULL,
    PRIMARY KEY (alert_id, position)
);
-- Each culprit's effect on the gated counters, in the report's order;
-- NULL numbers: the gate had none (an unsupported counter).
CREATE TABLE alert_culprit_effects (
    alert_id     INTEGER NOT NULL,
    position     INTEGER NOT NULL,
    counter      TEXT NOT NULL,
    ordinal      INTEGER NOT NULL,
    unit         TEXT NOT NULL,
    status       TEXT NOT NULL,
    value_before REAL,
    value_after  REAL,
    delta_pct    REAL,
    ci_lower_pct REAL,
    ci_upper_pct REAL,
    PRIMARY KEY (alert_id, position, ordinal),
    FOREIGN KEY (alert_id, position) REFERENCES alert_culprit_commits(alert_id, position) ON DELETE CASCADE
);
