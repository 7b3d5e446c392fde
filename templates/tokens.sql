-- tokens.sql: every API token that has not been revoked: its SHA-256 hash and its own limit
-- per rolling minute (rate_limit; null: edge.rate_limit). The edge loads them at start and
-- every edge.token_refresh.
SELECT token_hash, rate_limit
FROM api_tokens
WHERE revoked_at IS NULL
