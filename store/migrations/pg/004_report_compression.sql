-- pg/004_report_compression.sql: the reports and flame graphs stored with
-- comparisons are compressed with LZ4 rather than pglz (PostgreSQL's
-- default). A fresh compare's report (16 KB for 10 counters) is TOASTed on
-- insert; pglz took half the INSERT's time, LZ4 a fifth as long (0.42 ->
-- 0.22 ms per INSERT in pg_stat_statements under bench/bench_engines.sh).
-- Only new values are compressed with it; reading either kind is the same.
-- A server built without LZ4 (it needs --with-lz4, which Debian's has)
-- refuses the method: the columns then keep pglz and the migration still
-- counts as applied.
DO $$
BEGIN
    ALTER TABLE comparisons ALTER COLUMN report SET COMPRESSION lz4;
    ALTER TABLE comparison_artifacts ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END
$$;
