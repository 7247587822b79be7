-- pg/013_acceptances.sql: a reviewer's acceptance of a comparison's
-- regression; SQLite's 017_acceptances.sql (the comments there say what each
-- column holds).
CREATE TABLE acceptances (
    comparison_id bigint PRIMARY KEY REFERENCES comparisons(id),
    head_sha      text NOT NULL CHECK (length(head_sha) BETWEEN 7 AND 64),
    login         text NOT NULL CHECK (length(login) BETWEEN 1 AND 64),
    reason        text NOT NULL CHECK (length(reason) <= 2000),
    accepted_at   bigint NOT NULL
);
-- Finding a commit's comparisons: runs_project_sha gives its runs, this
-- their comparisons.
CREATE INDEX comparisons_candidate ON comparisons (candidate_run);
