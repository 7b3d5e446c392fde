-- webhook_enqueue.sql: adds the message $1 (type $2, body $3, announcing snapshot $4, whose
-- commit was noticed at $5) for every enabled endpoint, and returns their ids. The
-- endpoints' rows are locked first (webhook_head_lock.sql explains why).
WITH enabled AS (
    SELECT id FROM webhook_endpoints
    WHERE disabled_at IS NULL
    ORDER BY id
    FOR UPDATE
)
INSERT INTO webhook_deliveries (endpoint_id, message_id, event_type, body, snapshot, noticed_at)
SELECT id, $1, $2, $3, $4, $5 FROM enabled
ON CONFLICT (endpoint_id, message_id) DO NOTHING
RETURNING endpoint_id
