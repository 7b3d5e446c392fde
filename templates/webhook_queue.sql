-- webhook_queue.sql: the deliveries not yet made to enabled endpoints, and the time the
-- oldest of them was queued (null when there is none), for the metrics.
SELECT count(*), min(d.created_at)
FROM webhook_deliveries d
JOIN webhook_endpoints e ON e.id = d.endpoint_id
WHERE d.delivered_at IS NULL AND d.given_up_at IS NULL AND e.disabled_at IS NULL
