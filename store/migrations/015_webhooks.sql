-- 015_webhooks.sql: a project's alert webhooks and their delivery log
-- (issue 33, item 4; docs/history.md "Notifications").
--
-- url: an absolute http(s) URL of at most 2048 bytes (service::
-- normalize_webhook_url checks it). format: 'json' (the generic body, signed
-- with HMAC-SHA256 when secret is set) or 'slack' (an incoming-webhook
-- body). secret: kept to sign deliveries, never shown back. The last_*
-- columns are the delivery log: the outcome of the newest delivery
-- ('delivered', 'failed' or 'dropped'), how many attempts it took, when it
-- ended (unix seconds) and the last error (HTTP status or transport error).
CREATE TABLE webhooks (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id),
    url           TEXT NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    format        TEXT NOT NULL CHECK (format IN ('json', 'slack')),
    secret        TEXT,
    created_at    INTEGER NOT NULL,
    last_outcome  TEXT CHECK (last_outcome IN ('delivered', 'failed', 'dropped')),
    last_attempts INTEGER,
    last_at       INTEGER,
    last_error    TEXT
);
CREATE INDEX webhooks_project ON webhooks (project_id);
