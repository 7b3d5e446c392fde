-- webhook_position_set.sql: records $1 as the feeds' position after the changes the
-- catalogue.changed being queued announces.
INSERT INTO webhook_feed_position (last) VALUES ($1)
ON CONFLICT (one) DO UPDATE SET last = EXCLUDED.last
