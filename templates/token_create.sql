-- token_create.sql: stores a new API token for the application named $1 ($2 is the SHA-256
-- of the token; the token itself is never stored) with its own limit per rolling minute $3
-- (null: edge.rate_limit) and returns its id.
INSERT INTO api_tokens (name, token_hash, rate_limit)
VALUES ($1, $2, $3)
RETURNING id
