-- pg/008_attribution_artifacts.sql: SQLite's 012_attribution_artifacts.sql
-- (a comparison's attribution stored as an artifact of kind 'attribution').
-- PostgreSQL changes the CHECK in place; the column constraint made by
-- pg/003_artifacts.sql has PostgreSQL's default name.
ALTER TABLE comparison_artifacts DROP CONSTRAINT comparison_artifacts_kind_check;
ALTER TABLE comparison_artifacts ADD CONSTRAINT comparison_artifacts_kind_check
    CHECK (kind IN ('flame_graph', 'attribution'));
