-- notify.sql: change capture for freshness. builder migrate applies it to the primary when
-- builder.listen is on (notify_drop.sql undoes it when it is off). Returns nothing.
-- Idempotent: functions are replaced and each trigger is dropped and created again.
--
-- After every statement that changes courses, classes, rooms, locations or registrations,
-- one notification on the channel catalogue_changes says what changed, as JSON:
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
-- row that moved (a class to another course) names both sides; an UPDATE that changes no
-- column that a document shows sends nothing. A statement that changes more than
-- 1,000 distinct ids, or whose payload would not fit in NOTIFY's 8,000 bytes, sends "all"
-- instead; TRUNCATE always does. Listing at most 1,001 ids bounds the work a bulk
-- statement adds. A transaction's notifications are delivered when it commits, and only
-- then: a rolled-back change sends nothing.
--
-- A provider whose schema differs adapts this file (templates.dir) so that it sends the
-- same payloads: the ids of the rows the read templates select by.

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

-- Each function below serves the INSERT, UPDATE and DELETE triggers of its table. A trigger
-- sees only the transition tables it declares (new_rows for INSERT, old_rows for DELETE,
-- both for UPDATE), and PL/pgSQL plans a statement the first time it runs, so each branch
-- names only the tables its operation has.

CREATE OR REPLACE FUNCTION catalogue_notify_courses() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM new_rows LIMIT 1001) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM old_rows LIMIT 1001) s;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(id) INTO ids FROM (
            SELECT DISTINCT COALESCE(n.id, o.id) AS id
            FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            WHERE (n.id, n.name, n.type, n.description, n.is_public)
                  IS DISTINCT FROM (o.id, o.name, o.type, o.description, o.is_public)
            LIMIT 1001) s;
    ELSE
        PERFORM catalogue_notify(TG_TABLE_NAME, NULL);
        RETURN NULL;
    END IF;
    PERFORM catalogue_notify(TG_TABLE_NAME, CASE
        WHEN catalogue_ids(ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', TG_TABLE_NAME, 'ids', catalogue_ids(ids))
    END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalogue_notify_classes() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    course_ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM new_rows LIMIT 1001) s;
        SELECT array_agg(course_id) INTO course_ids FROM (SELECT DISTINCT course_id FROM new_rows LIMIT 1001) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM old_rows LIMIT 1001) s;
        SELECT array_agg(course_id) INTO course_ids FROM (SELECT DISTINCT course_id FROM old_rows LIMIT 1001) s;
    ELSIF TG_OP = 'UPDATE' THEN
        WITH changed AS (
            SELECT x.id, x.course_id
            FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.id, n.course_id), (o.id, o.course_id)) AS x (id, course_id)
            WHERE x.id IS NOT NULL
              AND (n.id, n.course_id, n.room_id, n.start_date, n.end_date, n.schedule, n.cost,
                   n.seat_limit, n.down_payment, n.is_public)
                  IS DISTINCT FROM
                  (o.id, o.course_id, o.room_id, o.start_date, o.end_date, o.schedule, o.cost,
                   o.seat_limit, o.down_payment, o.is_public)
        )
        SELECT (SELECT array_agg(id) FROM (SELECT DISTINCT id FROM changed LIMIT 1001) a),
               (SELECT array_agg(course_id) FROM (SELECT DISTINCT course_id FROM changed LIMIT 1001) b)
        INTO ids, course_ids;
    ELSE
        PERFORM catalogue_notify(TG_TABLE_NAME, NULL);
        RETURN NULL;
    END IF;
    PERFORM catalogue_notify(TG_TABLE_NAME, CASE
        WHEN catalogue_ids(ids) IS NULL OR catalogue_ids(course_ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', TG_TABLE_NAME, 'ids', catalogue_ids(ids), 'course_ids', catalogue_ids(course_ids))
    END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalogue_notify_registrations() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    class_ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(class_id) INTO class_ids FROM (SELECT DISTINCT class_id FROM new_rows LIMIT 1001) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(class_id) INTO class_ids FROM (SELECT DISTINCT class_id FROM old_rows LIMIT 1001) s;
    ELSIF TG_OP = 'UPDATE' THEN
        -- Only the class a registration takes a seat in shows in a document.
        SELECT array_agg(class_id) INTO class_ids FROM (
            SELECT DISTINCT x.class_id
            FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.class_id), (o.class_id)) AS x (class_id)
            WHERE x.class_id IS NOT NULL AND (n.id, n.class_id) IS DISTINCT FROM (o.id, o.class_id)
            LIMIT 1001) s;
    ELSE
        PERFORM catalogue_notify(TG_TABLE_NAME, NULL);
        RETURN NULL;
    END IF;
    PERFORM catalogue_notify(TG_TABLE_NAME, CASE
        WHEN catalogue_ids(class_ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', TG_TABLE_NAME, 'class_ids', catalogue_ids(class_ids))
    END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalogue_notify_rooms() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM new_rows LIMIT 1001) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM old_rows LIMIT 1001) s;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(id) INTO ids FROM (
            SELECT DISTINCT x.id
            FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.id), (o.id)) AS x (id)
            WHERE x.id IS NOT NULL
              AND (n.id, n.location_id, n.name) IS DISTINCT FROM (o.id, o.location_id, o.name)
            LIMIT 1001) s;
    ELSE
        PERFORM catalogue_notify(TG_TABLE_NAME, NULL);
        RETURN NULL;
    END IF;
    PERFORM catalogue_notify(TG_TABLE_NAME, CASE
        WHEN catalogue_ids(ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', TG_TABLE_NAME, 'ids', catalogue_ids(ids))
    END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION catalogue_notify_locations() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM new_rows LIMIT 1001) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(id) INTO ids FROM (SELECT DISTINCT id FROM old_rows LIMIT 1001) s;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(id) INTO ids FROM (
            SELECT DISTINCT x.id
            FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.id), (o.id)) AS x (id)
            WHERE x.id IS NOT NULL
              AND (n.id, n.name, n.city, n.state, n.zip, n.country)
                  IS DISTINCT FROM (o.id, o.name, o.city, o.state, o.zip, o.country)
            LIMIT 1001) s;
    ELSE
        PERFORM catalogue_notify(TG_TABLE_NAME, NULL);
        RETURN NULL;
    END IF;
    PERFORM catalogue_notify(TG_TABLE_NAME, CASE
        WHEN catalogue_ids(ids) IS NULL THEN NULL
        ELSE jsonb_build_object('table', TG_TABLE_NAME, 'ids', catalogue_ids(ids))
    END);
    RETURN NULL;
END
$$;

-- The triggers: three with transition tables per table (PostgreSQL allows transition tables
-- only on a trigger for a single event) and one for TRUNCATE.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['courses', 'classes', 'registrations', 'rooms', 'locations'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_insert ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_update ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_delete ON %I', t);
        EXECUTE format('DROP TRIGGER IF EXISTS catalogue_notify_truncate ON %I', t);
        EXECUTE format('CREATE TRIGGER catalogue_notify_insert AFTER INSERT ON %I '
            'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %I()', t, 'catalogue_notify_' || t);
        EXECUTE format('CREATE TRIGGER catalogue_notify_update AFTER UPDATE ON %I '
            'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %I()', t, 'catalogue_notify_' || t);
        EXECUTE format('CREATE TRIGGER catalogue_notify_delete AFTER DELETE ON %I '
            'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION %I()', t, 'catalogue_notify_' || t);
        EXECUTE format('CREATE TRIGGER catalogue_notify_truncate AFTER TRUNCATE ON %I '
            'FOR EACH STATEMENT EXECUTE FUNCTION %I()', t, 'catalogue_notify_' || t);
    END LOOP;
END
$$;
