-- webhook_enable.sql: enables the endpoint with id $1 with a clean failure record; returns
-- its id if it exists.
UPDATE webhook_endpoints
SET disabled_at = NULL, disabled_reason = NULL, consecutive_failures = 0, failing_since = NULL
WHERE id = $1
RETURNING id
