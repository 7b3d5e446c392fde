-- webhook_rotate.sql: makes $2 the signing secret of endpoint $1; the current one keeps
-- signing beside it for the interval $3. Returns the id if the endpoint exists.
UPDATE webhook_endpoints
SET previous_secret = secret, previous_secret_until = now() + $3::interval, secret = $2
WHERE id = $1
RETURNING id
