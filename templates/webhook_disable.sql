-- webhook_disable.sql: disables endpoint $1 for the reason $2 and gives up its deliveries
-- not yet made, if it is still failing since $3 (webhook_failed.sql's answer): an endpoint
-- enabled again meanwhile (builder webhook enable clears failing_since) stays enabled. It
-- then gets no more until builder webhook enable. Run after webhook_head_lock.sql, in the
-- same transaction (queue.disable says why). Returns the endpoint's id if it disabled it.
WITH e AS (
    SELECT id FROM webhook_endpoints WHERE id = $1 AND failing_since = $3
), d AS (
    UPDATE webhook_deliveries
    SET given_up_at = now(), last_error = COALESCE(last_error, $2)
    WHERE endpoint_id IN (SELECT id FROM e) AND delivered_at IS NULL AND given_up_at IS NULL
)
UPDATE webhook_endpoints
SET disabled_at = now(), disabled_reason = $2
WHERE id IN (SELECT id FROM e)
RETURNING id
