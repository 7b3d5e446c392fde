-- token_list.sql: every API token, revoked ones included, oldest first: id, name,
-- created_at, revoked_at (null while active). Hashes are not returned.
SELECT id, name, created_at, revoked_at
FROM api_tokens
ORDER BY id
