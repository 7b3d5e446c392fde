-- webhook_position.sql: the feeds' position after the changes the last catalogue.changed
-- queued announced, locked until the queueing's transaction ends (no row: none queued yet).
SELECT last FROM webhook_feed_position FOR UPDATE
