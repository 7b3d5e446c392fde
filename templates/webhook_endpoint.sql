-- webhook_endpoint.sql: what a delivery to endpoint $1 needs: its URL, its secrets (the
-- previous one only while it still signs) and whether it is disabled. No row: removed.
SELECT url, secret,
       CASE WHEN previous_secret_until > now() THEN previous_secret END AS previous_secret,
       disabled_at IS NOT NULL AS disabled
FROM webhook_endpoints
WHERE id = $1
