-- webhook_head.sql: the oldest delivery endpoint $1 has not had yet: deliveries to one
-- endpoint are made one at a time, in the order they were queued.
SELECT id, message_id, body, snapshot, noticed_at, created_at, attempts, first_attempt_at, next_attempt_at
FROM webhook_deliveries
WHERE endpoint_id = $1 AND delivered_at IS NULL AND given_up_at IS NULL
ORDER BY id
LIMIT 1
