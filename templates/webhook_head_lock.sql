-- webhook_head_lock.sql: locks endpoint $1's row and says whether it has a delivery to make.
-- The delivery job ends only in a transaction holding this lock, and webhook_enqueue.sql
-- takes the same locks before it queues: a message queued while the job runs is either
-- seen here or finds the job ended and queues a new one.
SELECT EXISTS (
    SELECT 1 FROM webhook_deliveries
    WHERE endpoint_id = $1 AND delivered_at IS NULL AND given_up_at IS NULL
)
FROM webhook_endpoints
WHERE id = $1
FOR UPDATE
