-- token_create.sql: stores a new API token for the application named $1 ($2 is the SHA-256
-- of the token; the token itself is never stored) and returns its id.
INSERT INTO api_tokens (name, token_hash)
VALUES ($1, $2)
RETURNING id
