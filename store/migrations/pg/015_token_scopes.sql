-- pg/015_token_scopes.sql: SQLite's 019_token_scopes.sql (scopes per token,
-- and which token wrote each run and acceptance). The identity column never
-- reuses an id, so api_tokens needs no rebuild here.
ALTER TABLE api_tokens ADD COLUMN scopes text CHECK (scopes IS NULL OR length(scopes) BETWEEN 4 AND 64);
ALTER TABLE runs ADD COLUMN token_id bigint;
ALTER TABLE runs ADD COLUMN token_name text;
ALTER TABLE acceptances ADD COLUMN token_id bigint;
ALTER TABLE acceptances ADD COLUMN token_name text;
