-- 007_artifacts.sql: files stored with a comparison (issue 12). One kind so
-- far: the differential flame graph of a benchmark, the SVG that
-- `perfgate run --profile --server` draws and uploads after the comparison
-- (PUT /api/v1/projects/{project}/comparisons/{id}/flame-graph?benchmark=B).
--
-- content is the SVG text (UTF-8: the service refuses anything else), at
-- most store::max_artifact_bytes = 4 MiB; the service answers a larger
-- upload with 413 before it gets here. Uploading again replaces it. The
-- dashboard's comparison page reads which benchmarks have one (the primary
-- key's prefix) and the file itself only when a browser asks for it.
CREATE TABLE comparison_artifacts (
    comparison_id INTEGER NOT NULL REFERENCES comparisons(id),
    benchmark     TEXT NOT NULL CHECK (length(benchmark) BETWEEN 1 AND 256),
    kind          TEXT NOT NULL CHECK (kind IN ('flame_graph')),
    content       TEXT NOT NULL CHECK (length(CAST(content AS BLOB)) BETWEEN 1 AND 4194304),
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (comparison_id, kind, benchmark)
);
