-- pg/006_change_point_settings.sql: SQLite's 010_change_point_settings.sql
-- (how the history watch detects change points, per project; NULL is the
-- server's default).
ALTER TABLE projects
    ADD COLUMN change_point_method text
        CHECK (change_point_method IS NULL OR change_point_method IN ('perfgate', 'otava')),
    ADD COLUMN change_point_window integer
        CHECK (change_point_window IS NULL OR change_point_window BETWEEN 2 AND 1000000),
    ADD COLUMN change_point_max_p double precision
        CHECK (change_point_max_p IS NULL OR (change_point_max_p > 0 AND change_point_max_p < 1)),
    ADD COLUMN change_point_min_magnitude double precision
        CHECK (change_point_min_magnitude IS NULL OR change_point_min_magnitude >= 0);
