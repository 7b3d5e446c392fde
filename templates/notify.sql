-- notify.sql: change capture for freshness. builder migrate applies it to the primary when
-- builder.listen is on (notify_drop.sql undoes it when it is off), after mapping.sql.
-- Always the embedded file: the tables it watches are those catalogue_feeds names (the
-- mapping), so a provider's schema needs no copy of it. Returns nothing. Idempotent:
-- functions are replaced and the triggers of every table are dropped and created again.
--
-- After every statement that changes a table of catalogue_feeds, one notification on the
-- channel catalogue_changes says what changed, as JSON, by the feed's kind:
--   {"table": "courses",       "ids": [course ids]}
--   {"table": "classes",       "ids": [class ids], "course_ids": [their courses, old and new]}
--   {"table": "registrations", "class_ids": [classes whose registrations changed]}
--   {"table": "rooms",         "ids": [room ids]}
--   {"table": "locations",     "ids": [location ids]}
--   {"table": "<any of them>", "all": true}    -- too much to list: rebuild everything
-- builder serve LISTENs and rebuilds only the documents these rows can affect.
--
-- The triggers are statement-level with transition tables (PostgreSQL 10 or later), so a
-- bulk change sends one notification, not one per row. Ids are listed old and new, so a
-- row that moved (a class to another course) names both sides; an UPDATE that changes none
-- of the feed's watched columns sends nothing. A statement that changes more than
-- 1,000 distinct ids, or whose payload would not fit in NOTIFY's 8,000 bytes, sends "all"
-- instead; TRUNCATE always does. Listing at most 1,001 ids bounds the work a bulk
-- statement adds. A transaction's notifications are delivered when it commits, and only
-- then: a rolled-back change sends nothing.

-- catalogue_notify sends payload on catalogue_changes, or {"table": tbl, "all": true} when
-- payload is NULL (too many ids) or too long for NOTIFY. It sends nothing when every list
-- in payload is empty.
CREATE OR REPLACE FUNCTION catalogue_notify(tbl text, payload jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    body text;
BEGIN
    IF payload IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM jsonb_each(payload) e
        WHERE jsonb_typeof(e.value) = 'array' AND e.value <> '[]'::jsonb
    ) THEN
        RETURN;
    END IF;
    body := payload::text;
    IF body IS NULL OR octet_length(body) > 7999 THEN
        body := jsonb_build_object('table', tbl, 'all', true)::text;
    END IF;
    PERFORM pg_notify('catalogue_changes', body);
END
$$;

-- catalogue_ids returns the distinct ids as a JSON array, or NULL when there are more than
-- 1,000 of them.
CREATE OR REPLACE FUNCTION catalogue_ids(ids bigint[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cardinality(ids) > 1000 THEN NULL ELSE to_jsonb(COALESCE(ids, '{}')) END
$$;

-- catalogue_notify_feed serves the INSERT, UPDATE, DELETE and TRUNCATE triggers of every
-- feed. Its arguments come from the feed's row: kind, the ids column, the course_ids column
-- ('' unless classes), the key column and the watched columns as a row expression ('': the
-- whole row). A trigger sees only the transition tables it declares (new_rows for INSERT,
-- old_rows for DELETE, both for UPDATE); the statements are dynamic, as the columns are the
-- feed's, and name only the tables the operation has.
CREATE OR REPLACE FUNCTION catalogue_notify_feed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    kind text := TG_ARGV[0];
    ids_col text := TG_ARGV[1];
    course_col text := NULLIF(TG_ARGV[2], '');
    key_col text := TG_ARGV[3];
    watched text := TG_ARGV[4];
    changed text;
    ids bigint[];
    course_ids bigint[];
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM catalogue_notify(kind, NULL);
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        changed := 'SELECT * FROM new_rows';
    ELSIF TG_OP = 'DELETE' THEN
        changed := 'SELECT * FROM old_rows';
    ELSE
        -- Both sides of each updated row whose watched columns changed.
        changed := format('SELECT x.* FROM new_rows n FULL JOIN old_rows o ON o.%1$I = n.%1$I '
            'CROSS JOIN LATERAL (SELECT n.* UNION ALL SELECT o.*) x '
            'WHERE %2$s IS DISTINCT FROM %3$s',
            key_col,
            CASE WHEN watched = '' THEN 'ROW(n.*)' ELSE replace(watched, '@.', 'n.') END,
            CASE WHEN watched = '' THEN 'ROW(o.*)' ELSE replace(watched, '@.', 'o.') END);
    END IF;
    EXECUTE format('WITH c AS (%s) SELECT '
        '(SELECT array_agg(v ORDER BY v) FROM (SELECT DISTINCT %I::bigint AS v FROM c WHERE %I IS NOT NULL ORDER BY 1 LIMIT 1001) a), '
        '(SELECT array_agg(v ORDER BY v) FROM (SELECT DISTINCT %I::bigint AS v FROM c WHERE %I IS NOT NULL ORDER BY 1 LIMIT 1001) b)',
        changed, ids_col, ids_col, COALESCE(course_col, ids_col), COALESCE(course_col, ids_col))
        INTO ids, course_ids;
    PERFORM catalogue_notify(kind, CASE
        WHEN catalogue_ids(ids) IS NULL THEN NULL
        WHEN kind = 'registrations' THEN jsonb_build_object('table', kind, 'class_ids', catalogue_ids(ids))
        WHEN kind <> 'classes' THEN jsonb_build_object('table', kind, 'ids', catalogue_ids(ids))
        WHEN catalogue_ids(course_ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', kind, 'ids', catalogue_ids(ids), 'course_ids', catalogue_ids(course_ids))
    END);
    RETURN NULL;
END
$$;

-- The triggers: three with transition tables per table (PostgreSQL allows transition tables
-- only on a trigger for a single event) and one for TRUNCATE. Those of earlier versions had
-- a function per table: dropped with their triggers.
DO $$
DECLARE
    r record;
    t text;
    args text;
    refused text[] := '{}';
    integers boolean := false;
BEGIN
    FOR r IN SELECT t.tgrelid::regclass AS tbl, t.tgname FROM pg_trigger t
             WHERE t.tgname LIKE 'catalogue\_notify\_%' AND NOT t.tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;
    FOREACH t IN ARRAY ARRAY['courses', 'classes', 'registrations', 'rooms', 'locations'] LOOP
        EXECUTE format('DROP FUNCTION IF EXISTS %I()', 'catalogue_notify_' || t);
    END LOOP;
    -- A feed naming a column its table lacks, or ids that are not integers, would fail
    -- every write to the table once its trigger fires: refuse it here, naming every one.
    FOR r IN SELECT f.source, c.col, c.what, a.atttypid::regtype AS typ
             FROM catalogue_feeds f
             CROSS JOIN LATERAL (
                 SELECT f.ids, 'ids' UNION ALL SELECT f.course_ids, 'course_ids' UNION ALL SELECT f.key, 'key'
                 UNION ALL SELECT w, 'watched' FROM unnest(f.watched) w
             ) AS c (col, what)
             LEFT JOIN pg_attribute a ON a.attrelid = f.source::regclass AND a.attname = c.col
                                     AND a.attnum > 0 AND NOT a.attisdropped
             WHERE c.col IS NOT NULL
               AND (a.attname IS NULL
                    OR (c.what IN ('ids', 'course_ids') AND a.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)))
             ORDER BY f.source, c.what, c.col LOOP
        IF r.typ IS NULL THEN
            refused := refused || format('%s names %s, which %s does not have', r.source, r.col, r.source);
        ELSE
            refused := refused || format('%s.%s (%s) is %s, not an integer', r.source, r.col, r.what, r.typ);
            integers := true;
        END IF;
    END LOOP;
    IF refused <> '{}' THEN
        RAISE EXCEPTION 'catalogue_feeds: % (mapping.sql)', array_to_string(refused, '; ')
            USING HINT = CASE WHEN integers THEN 'A feed''s ids and course_ids are the integer ids its views publish: name a column of the table that holds them as an integer (a stored generated column casting yours will do).' ELSE '' END;
    END IF;
    FOR r IN SELECT f.*, f.source::regclass AS tbl FROM catalogue_feeds f LOOP
        args := format('%L, %L, %L, %L, %L', r.kind, r.ids, COALESCE(r.course_ids, ''), r.key,
            COALESCE('ROW(' || (SELECT string_agg('@.' || quote_ident(c), ', ') FROM unnest(r.watched) c) || ')', ''));
        EXECUTE format('CREATE TRIGGER catalogue_notify_insert AFTER INSERT ON %s '
            'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_notify_feed(%s)', r.tbl, args);
        EXECUTE format('CREATE TRIGGER catalogue_notify_update AFTER UPDATE ON %s '
            'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_notify_feed(%s)', r.tbl, args);
        EXECUTE format('CREATE TRIGGER catalogue_notify_delete AFTER DELETE ON %s '
            'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_notify_feed(%s)', r.tbl, args);
        EXECUTE format('CREATE TRIGGER catalogue_notify_truncate AFTER TRUNCATE ON %s '
            'FOR EACH STATEMENT EXECUTE FUNCTION catalogue_notify_feed(%s)', r.tbl, args);
    END LOOP;
END
$$;
