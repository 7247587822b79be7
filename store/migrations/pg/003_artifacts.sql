-- pg/003_artifacts.sql: files stored with a comparison; SQLite's
-- 007_artifacts.sql (the comments there say how the table is used).
-- content is the SVG text, at most store::max_artifact_bytes = 4 MiB
-- counted in bytes (octet_length), as SQLite counts CAST(content AS BLOB).

CREATE TABLE comparison_artifacts (
    comparison_id bigint NOT NULL REFERENCES comparisons(id),
    benchmark     text NOT NULL CHECK (length(benchmark) BETWEEN 1 AND 256),
    kind          text NOT NULL CHECK (kind IN ('flame_graph')),
    content       text NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 4194304),
    created_at    bigint NOT NULL,
    PRIMARY KEY (comparison_id, kind, benchmark)
);
