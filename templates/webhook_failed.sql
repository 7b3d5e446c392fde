-- webhook_failed.sql: records that delivery $1 to endpoint $2 failed for the reason $3; it is
-- tried again at $4, or given up when $5. Returns when the endpoint's failures began.
WITH d AS (
    UPDATE webhook_deliveries
    SET attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, now()),
        next_attempt_at = $4, last_error = $3, given_up_at = CASE WHEN $5 THEN now() END
    WHERE id = $1
)
UPDATE webhook_endpoints
SET last_failure_at = now(), last_failure_reason = $3, consecutive_failures = consecutive_failures + 1,
    failing_since = COALESCE(failing_since, now())
WHERE id = $2
RETURNING failing_since
