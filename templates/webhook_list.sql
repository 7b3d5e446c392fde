-- webhook_list.sql: every endpoint without its secrets, with its state, its last success and
-- failure, and its deliveries not yet made, by id.
SELECT e.id, e.url, e.description, e.created_at, e.disabled_at, e.disabled_reason,
       e.last_success_at, e.last_failure_at, e.last_failure_reason, e.consecutive_failures,
       (SELECT count(*) FROM webhook_deliveries d
        WHERE d.endpoint_id = e.id AND d.delivered_at IS NULL AND d.given_up_at IS NULL) AS pending
FROM webhook_endpoints e
ORDER BY e.id
