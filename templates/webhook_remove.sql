-- webhook_remove.sql: deletes the endpoint with id $1 and its deliveries; returns its id if
-- it existed.
DELETE FROM webhook_endpoints
WHERE id = $1
RETURNING id
