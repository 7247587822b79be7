-- 019_token_scopes.sql: scoped tokens, token ids never reused, and which
-- token wrote each run and acceptance (issue 43: findings 2, 3 and 10;
-- docs/http-api.md "Token scopes").
--
-- api_tokens is rebuilt with AUTOINCREMENT: without it SQLite hands the id
-- of a deleted (revoked) newest row to the next token, and a dashboard
-- session, which names its token by id, came back to life with the
-- replacement. AUTOINCREMENT never reuses an id (sqlite_sequence keeps the
-- largest ever handed out; PostgreSQL's identity never did). Ids deleted
-- before this migration above the largest remaining one cannot be known and
-- may be handed out once more; no session names them any longer: sessions
-- live in the memory of the server that signed them in, and the upgrade that
-- runs this migration restarts it.
--
-- scopes: the token's scope list as `perfgate token create --scope` wrote it
-- ("read,upload"); NULL for tokens created before, which keep every power.
CREATE TABLE api_tokens_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id),
    name         TEXT NOT NULL,
    sha256       TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    scopes       TEXT CHECK (scopes IS NULL OR length(scopes) BETWEEN 4 AND 64)
);
INSERT INTO api_tokens_new (id, project_id, name, sha256, created_at, expires_at, last_used_at)
    SELECT id, project_id, name, sha256, created_at, expires_at, last_used_at FROM api_tokens;
DROP TABLE api_tokens;
ALTER TABLE api_tokens_new RENAME TO api_tokens;

-- Who wrote a run or an acceptance: the token's id and its name at the time
-- (a revoked token's row is gone; the record stays). NULL: stored by the CLI
-- on the database, or before this migration.
ALTER TABLE runs ADD COLUMN token_id INTEGER;
ALTER TABLE runs ADD COLUMN token_name TEXT;
ALTER TABLE acceptances ADD COLUMN token_id INTEGER;
ALTER TABLE acceptances ADD COLUMN token_name TEXT;
