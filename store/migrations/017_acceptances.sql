-- 017_acceptances.sql: a reviewer's acceptance of a comparison's regression
-- (issue 33, item 3; docs/github.md "Accepting a regression").
--
-- One acceptance per comparison, the newest: accepting again replaces who,
-- why and when. head_sha is the pull request head the acceptance was given
-- for, the commit of the comparison's candidate runs (store::accept_comparison
-- checks it): an acceptance never carries over to another commit, whose
-- comparison is another row. login: the GitHub login whose repository
-- permission was checked (at most 39 characters, plus "[bot]"). reason: the
-- reviewer's text, already cleaned by the service (at most 500 bytes).
-- accepted_at: unix seconds.
CREATE TABLE acceptances (
    comparison_id INTEGER PRIMARY KEY REFERENCES comparisons(id),
    head_sha      TEXT NOT NULL CHECK (length(head_sha) BETWEEN 7 AND 64),
    login         TEXT NOT NULL CHECK (length(login) BETWEEN 1 AND 64),
    reason        TEXT NOT NULL CHECK (length(reason) <= 2000),
    accepted_at   INTEGER NOT NULL
);
-- Finding a commit's comparisons: runs_project_sha gives its runs, this
-- their comparisons.
CREATE INDEX comparisons_candidate ON comparisons (candidate_run);
