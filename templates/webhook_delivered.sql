-- webhook_delivered.sql: records that delivery $1 to endpoint $2 succeeded, and clears the
-- endpoint's failures.
WITH d AS (
    UPDATE webhook_deliveries
    SET delivered_at = now(), attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, now())
    WHERE id = $1
)
UPDATE webhook_endpoints
SET last_success_at = now(), consecutive_failures = 0, failing_since = NULL
WHERE id = $2
