-- 014_token_lifecycle.sql: tokens that can be listed, expire and be revoked
-- (issue 31, finding 4).
--
-- expires_at: unix seconds after which the token opens nothing (NULL: never);
-- set by `perfgate token create --expires`. last_used_at: unix seconds of the
-- last request the token authorized, written at most once an hour per token
-- so that reads do not become writes (NULL: never used). Revoking a token
-- deletes its row; a dashboard session made with it re-checks the row on
-- every request and ends with it.
ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER;
ALTER TABLE api_tokens ADD COLUMN last_used_at INTEGER;
