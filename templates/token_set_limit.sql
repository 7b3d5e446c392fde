-- token_set_limit.sql: sets the limit per rolling minute of the API token with id $1 to $2
-- (null: back to edge.rate_limit). Returns the id when the token exists, no row otherwise.
-- Edges pick the new limit up with the token hashes, within edge.token_refresh.
UPDATE api_tokens
SET rate_limit = $2
WHERE id = $1
RETURNING id
