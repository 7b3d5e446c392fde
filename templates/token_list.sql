-- token_list.sql: every API token, revoked ones included, oldest first: id, name,
-- rate_limit (null: edge.rate_limit), created_at, revoked_at (null while active). Hashes are
-- not returned.
SELECT id, name, rate_limit, created_at, revoked_at
FROM api_tokens
ORDER BY id
