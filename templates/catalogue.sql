-- catalogue.sql: the catalogue's own tables and functions, whatever the provider's schema:
-- API tokens, the version of what the class search matches on, the feeds table that
-- mapping.sql fills and the functions of the change triggers. Always the embedded file;
-- builder migrate applies it first. Idempotent.

CREATE TABLE IF NOT EXISTS api_tokens (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT NOT NULL,
    token_hash BYTEA NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ NULL
);

-- A token's own limit per rolling minute (D23); null: edge.rate_limit. Added after the table
-- first shipped, so databases migrated before get it here.
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS rate_limit INTEGER NULL CHECK (rate_limit > 0);

-- The version of what the class search matches on: public, dates and course of classes;
-- public, name and type of courses. The edge keeps these in memory to find a search's page
-- and total without counting in the database (edge/search), and uses them only while the
-- version its data was read at is the version that the page's own query sees, so that both
-- come from the same data. catalogue_search_version is that version: the number of
-- statements that have changed these columns, as seen by the reading transaction. Each such
-- statement adds a row of 1 (the triggers of search_triggers.sql); rather than update one counter row, which
-- would make every writer of classes wait for the others and fail REPEATABLE READ writers,
-- a writer at READ COMMITTED also folds the rows no one holds into its own (SKIP LOCKED:
-- it never waits), so the table stays a few rows long and the sum is unchanged by folding.
CREATE TABLE IF NOT EXISTS catalogue_search_changes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    n  BIGINT NOT NULL
);
CREATE OR REPLACE VIEW catalogue_search_version AS
    SELECT COALESCE(SUM(n), 0)::bigint AS version FROM catalogue_search_changes;
CREATE OR REPLACE FUNCTION catalogue_search_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') = 'read committed' THEN
        WITH folded AS (
            DELETE FROM catalogue_search_changes
            WHERE id IN (SELECT id FROM catalogue_search_changes ORDER BY id LIMIT 100
                         FOR UPDATE SKIP LOCKED)
            RETURNING n
        )
        INSERT INTO catalogue_search_changes (n) SELECT 1 + COALESCE(SUM(n), 0) FROM folded;
    ELSE
        -- A row deleted by a transaction that committed after this one began would fail
        -- it with a serialization error: leave folding to others.
        INSERT INTO catalogue_search_changes (n) VALUES (1);
    END IF;
    RETURN NULL;
END
$$;
-- The trigger runs for whoever writes courses or classes: the provider's application, whose
-- role may write those tables and nothing of the catalogue's. It writes
-- catalogue_search_changes with its owner's rights instead (SECURITY DEFINER), its
-- search_path pinned to this schema with pg_temp last, so that no caller's temporary table
-- stands in for it. CREATE OR REPLACE above resets both, so they are set on every migrate.
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION catalogue_search_changed() SECURITY DEFINER SET search_path = %I, pg_temp',
                   current_schema());
END
$$;
-- catalogue_feeds: which of the provider's tables feed which mapped name (see mapping.sql).
CREATE TABLE IF NOT EXISTS catalogue_feeds (
    source     TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('courses', 'classes', 'registrations', 'rooms', 'locations')),
    ids        TEXT NOT NULL,
    course_ids TEXT NULL CHECK ((kind = 'classes') = (course_ids IS NOT NULL)),
    key        TEXT NOT NULL DEFAULT 'id',
    watched    TEXT[] NULL,
    searched   TEXT[] NULL
);
