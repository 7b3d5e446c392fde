-- notify_drop.sql: removes what notify.sql installs, for builder migrate with builder.listen
-- off: no trigger, no notification, no cost on the primary's writes. Returns nothing.
-- Always the embedded file. Idempotent: it drops the triggers of every table, whether
-- catalogue_feeds still names it or not.
DO $$
DECLARE
    r record;
    t text;
BEGIN
    FOR r IN SELECT t.tgrelid::regclass AS tbl, t.tgname FROM pg_trigger t
             WHERE t.tgname LIKE 'catalogue\_notify\_%' AND NOT t.tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;
    -- The functions of earlier versions, one per table.
    FOREACH t IN ARRAY ARRAY['courses', 'classes', 'registrations', 'rooms', 'locations'] LOOP
        EXECUTE format('DROP FUNCTION IF EXISTS %I()', 'catalogue_notify_' || t);
    END LOOP;
END
$$;
DROP FUNCTION IF EXISTS catalogue_notify_feed();
DROP FUNCTION IF EXISTS catalogue_ids(bigint[]);
DROP FUNCTION IF EXISTS catalogue_notify(text, jsonb);
