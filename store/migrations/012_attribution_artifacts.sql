-- 012_attribution_artifacts.sql: a comparison's attribution is stored with
-- it (issue 29, finding 6). `perfgate run` works out where a regression
-- came from after the comparison (callgrind's per-function Ir; perf
-- record's per-function samples with --profile) and sends it to the store
-- with the comparison, as it sends the flame graph
-- (PUT /api/v1/projects/{project}/comparisons/{id}/attribution?benchmark=B).
-- It is one more kind of artifact: the benchmark's report "attribution"
-- object as JSON text (docs/report.md#attribution), at most
-- service::max_attribution_bytes = 256 KiB and service::max_attribution_functions
-- rows per table (the service checks both before it gets here; the CHECK
-- below keeps the artifacts' 4 MiB bound). Reading a comparison merges it
-- into the report's benchmark.
--
-- SQLite cannot change a CHECK constraint in place: the table is made
-- again with the wider kind list and its rows copied (no index or trigger
-- refers to it besides its primary key).
CREATE TABLE comparison_artifacts_new (
    comparison_id INTEGER NOT NULL REFERENCES comparisons(id),
    benchmark     TEXT NOT NULL CHECK (length(benchmark) BETWEEN 1 AND 256),
    kind          TEXT NOT NULL CHECK (kind IN ('flame_graph', 'attribution')),
    content       TEXT NOT NULL CHECK (length(CAST(content AS BLOB)) BETWEEN 1 AND 4194304),
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (comparison_id, kind, benchmark)
);
INSERT INTO comparison_artifacts_new (comparison_id, benchmark, kind, content, created_at)
    SELECT comparison_id, benchmark, kind, content, created_at FROM comparison_artifacts;
DROP TABLE comparison_artifacts;
ALTER TABLE comparison_artifacts_new RENAME TO comparison_artifacts;
