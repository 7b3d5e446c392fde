-- webhook_add.sql: stores a new endpoint at URL $1 with description $2 and signing secret
-- $3, and returns its id; no row when an endpoint at that URL exists already (it would get
-- every message twice).
INSERT INTO webhook_endpoints (url, description, secret)
SELECT $1, $2, $3
WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE url = $1)
RETURNING id
