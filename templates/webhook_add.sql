-- webhook_add.sql: stores a new endpoint at URL $1 with description $2 and signing secret
-- $3, and returns its id.
INSERT INTO webhook_endpoints (url, description, secret)
VALUES ($1, $2, $3)
RETURNING id
