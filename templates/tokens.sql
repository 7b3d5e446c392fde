-- tokens.sql: the SHA-256 hashes of every API token that has not been revoked.
-- The edge loads them at start and every edge.token_refresh.
SELECT token_hash
FROM api_tokens
WHERE revoked_at IS NULL
