-- 010_change_point_settings.sql: how the history watch detects change
-- points, per project.
--
-- NULL (every project until `perfgate project --change-point-...` sets one)
-- is the server's default (`perfgate serve --change-point-...`, else
-- stats::change_point_options' defaults: perfgate, window 50, max_p 0.001,
-- min_magnitude 0). service::service validates the values; the checks here
-- are the same bounds.
ALTER TABLE projects ADD COLUMN change_point_method TEXT
    CHECK (change_point_method IS NULL OR change_point_method IN ('perfgate', 'otava'));
ALTER TABLE projects ADD COLUMN change_point_window INTEGER
    CHECK (change_point_window IS NULL OR change_point_window BETWEEN 2 AND 1000000);
ALTER TABLE projects ADD COLUMN change_point_max_p REAL
    CHECK (change_point_max_p IS NULL OR (change_point_max_p > 0 AND change_point_max_p < 1));
ALTER TABLE projects ADD COLUMN change_point_min_magnitude REAL
    CHECK (change_point_min_magnitude IS NULL OR change_point_min_magnitude >= 0);
