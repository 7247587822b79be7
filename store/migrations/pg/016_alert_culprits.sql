-- pg/016_alert_culprits.sql: what `perfgate bisect --alert` found, stored on
-- the alert; SQLite's 020_alert_culprits.sql (the comments there say what
-- each column holds).
CREATE TABLE alert_culprits (
    alert_id   bigint PRIMARY KEY REFERENCES alerts(id) ON DELETE CASCADE,
    status     text NOT NULL CHECK (status IN ('found', 'undecided', 'no_change')),
    backend    text NOT NULL,
    counter    text NOT NULL,
    good_sha   text NOT NULL CHECK (length(good_sha) BETWEEN 7 AND 64),
    bad_sha    text NOT NULL CHECK (length(bad_sha) BETWEEN 7 AND 64),
    commits    bigint NOT NULL CHECK (commits >= 0),
    steps      bigint NOT NULL CHECK (steps >= 0),
    builds     bigint NOT NULL CHECK (builds >= 0),
    detail     text NOT NULL DEFAULT '',
    stored_at  bigint NOT NULL,
    token_id   bigint,
    token_name text
);
CREATE TABLE alert_culprit_commits (
    alert_id bigint NOT NULL REFERENCES alert_culprits(alert_id) ON DELETE CASCADE,
    position bigint NOT NULL,
    sha      text NOT NULL CHECK (length(sha) BETWEEN 7 AND 64),
    subject  text NOT NULL,
    author   text NOT NULL,
    share    double precision NOT NULL,
    PRIMARY KEY (alert_id, position)
);
CREATE TABLE alert_culprit_effects (
    alert_id     bigint NOT NULL,
    position     bigint NOT NULL,
    counter      text NOT NULL,
    ordinal      bigint NOT NULL,
    unit         text NOT NULL,
    status       text NOT NULL,
    value_before double precision,
    value_after  double precision,
    delta_pct    double precision,
    ci_lower_pct double precision,
    ci_upper_pct double precision,
    PRIMARY KEY (alert_id, position, ordinal),
    FOREIGN KEY (alert_id, position) REFERENCES alert_culprit_commits(alert_id, position) ON DELETE CASCADE
);
