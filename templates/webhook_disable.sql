-- webhook_disable.sql: disables endpoint $1 for the reason $2 and gives up its deliveries
-- not yet made: it gets no more until builder webhook enable. Run after webhook_head_lock.sql,
-- in the same transaction (queue.disable says why).
WITH d AS (
    UPDATE webhook_deliveries
    SET given_up_at = now(), last_error = COALESCE(last_error, $2)
    WHERE endpoint_id = $1 AND delivered_at IS NULL AND given_up_at IS NULL
)
UPDATE webhook_endpoints
SET disabled_at = now(), disabled_reason = $2
WHERE id = $1
