-- pg/010_token_lifecycle.sql: tokens that can be listed, expire and be
-- revoked; SQLite's 014_token_lifecycle.sql (the comments there say how).
ALTER TABLE api_tokens ADD COLUMN expires_at bigint;
ALTER TABLE api_tokens ADD COLUMN last_used_at bigint;
