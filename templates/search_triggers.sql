-- search_triggers.sql: the triggers that keep catalogue_search_version (catalogue.sql)
-- counting the statements that change what the class search matches on: one on each table
-- that catalogue_feeds (mapping.sql) says feeds courses or classes, firing on INSERT,
-- DELETE, TRUNCATE and an UPDATE naming one of its searched columns. builder migrate
-- applies it after the mapping, whatever builder.listen says. Always the embedded file.
-- Idempotent: the triggers of every table are dropped first, so that a table the mapping
-- no longer names keeps none. Returns nothing.
DO $$
DECLARE
    r record;
BEGIN
    -- A view has no row changes of its own to trigger on (PostgreSQL would refuse the trigger
    -- with "is a view"): say which feed names it and what to name instead.
    FOR r IN SELECT f.source, c.relkind FROM catalogue_feeds f
             JOIN pg_class c ON c.oid = f.source::regclass
             WHERE c.relkind NOT IN ('r', 'p') LOOP
        RAISE EXCEPTION 'catalogue_feeds: % is a %, not a table (mapping.sql)', r.source,
            CASE r.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                           WHEN 'f' THEN 'foreign table' ELSE 'relation of kind ' || r.relkind::text END
            USING HINT = 'A feed''s source is one of your tables: name the tables the view reads, one row each.';
    END LOOP;
    FOR r IN SELECT t.tgrelid::regclass AS tbl, t.tgname FROM pg_trigger t
             WHERE t.tgname IN ('catalogue_search_changed', 'classes_search_changed', 'courses_search_changed')
               AND NOT t.tgisinternal LOOP
        -- classes_ and courses_search_changed: the names of earlier versions.
        EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;
    FOR r IN SELECT f.source, f.searched FROM catalogue_feeds f WHERE f.kind IN ('courses', 'classes') LOOP
        -- Statement triggers: a bulk change adds one row. ENABLE ALWAYS: they fire also
        -- where changes are applied with session_replication_role = replica (logical
        -- replication).
        EXECUTE format('CREATE TRIGGER catalogue_search_changed AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE%s '
            'ON %s FOR EACH STATEMENT EXECUTE FUNCTION catalogue_search_changed()',
            CASE WHEN r.searched IS NULL THEN ''
                 ELSE ' OF ' || (SELECT string_agg(quote_ident(c), ', ') FROM unnest(r.searched) c) END,
            r.source::regclass);
        EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER catalogue_search_changed', r.source::regclass);
    END LOOP;
END
$$;
