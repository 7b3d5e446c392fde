-- webhook_schema.sql: the catalogue's own tables of the webhooks (D40-D43), idempotent.
-- builder migrate applies it after schema.sql, then River's migrations (its river_* tables),
-- in the same transaction.

-- One row per endpoint an admin added (builder webhook add). The secrets sign deliveries,
-- so they are stored as they are (whsec_ + base64), never shown after add and rotate-secret.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url                   TEXT NOT NULL,
    description           TEXT NOT NULL DEFAULT '',
    secret                TEXT NOT NULL,
    -- After rotate-secret the previous secret signs beside the new one until this time.
    previous_secret       TEXT NULL,
    previous_secret_until TIMESTAMPTZ NULL,
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    disabled_at           TIMESTAMPTZ NULL,
    disabled_reason       TEXT NULL,
    last_success_at       TIMESTAMPTZ NULL,
    last_failure_at       TIMESTAMPTZ NULL,
    last_failure_reason   TEXT NULL,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    -- The first failure since the last success; an endpoint failing for
    -- webhooks.disable_after is disabled.
    failing_since         TIMESTAMPTZ NULL
);

-- One row per message to send to one endpoint, with its exact body: every retry sends the
-- same bytes with the same webhook-id. Delivered or given up, it is kept for the record.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id      BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    message_id       TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    body             TEXT NOT NULL,
    snapshot         TEXT NULL,        -- the snapshot it announces; edges must serve it first (D42)
    noticed_at       TIMESTAMPTZ NULL, -- when builder serve heard of the commit it announces
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempts         INTEGER NOT NULL DEFAULT 0,
    first_attempt_at TIMESTAMPTZ NULL,
    next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_error       TEXT NULL,
    delivered_at     TIMESTAMPTZ NULL,
    given_up_at      TIMESTAMPTZ NULL,
    UNIQUE (endpoint_id, message_id)
);

-- Each endpoint's pending deliveries in order: the delivery worker reads its head.
CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, id)
    WHERE delivered_at IS NULL AND given_up_at IS NULL
;

-- The feeds' position after the changes the last catalogue.changed queued announced (one
-- row): the next message's feed URLs start there rather than just before its own change, so
-- that a change whose message was never queued (builder serve stopped between publishing and
-- queueing, or the queueing failed) is read by a receiver that follows them.
CREATE TABLE IF NOT EXISTS webhook_feed_position (
    one  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    last BIGINT NOT NULL
)
