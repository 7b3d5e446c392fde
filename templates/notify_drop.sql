-- notify_drop.sql: removes what notify.sql installs, for builder migrate with builder.listen
-- off: no trigger, no notification, no cost on the primary's writes. Returns nothing.
-- Idempotent.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['courses', 'classes', 'registrations', 'rooms', 'locations'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_insert ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_update ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_delete ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_truncate ON %I', t);
        EXECUTE format('DROP FUNCTION IF EXISTS %I()', 'catalogue_notify_' || t);
    END LOOP;
END
$$;
DROP FUNCTION IF EXISTS catalogue_ids(bigint[]);
DROP FUNCTION IF EXISTS catalogue_notify(text, jsonb);
