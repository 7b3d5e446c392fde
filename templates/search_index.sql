-- search_index.sql: what the class search matches on, for the edge to hold in memory
-- (edge/search/index): one row per public course, with its public classes, and the version
-- of this data (catalogue_search_version, schema.sql) read in the same statement, hence the
-- same snapshot; one row with the version and NULL for the rest when no course is public.
-- Returns, in ascending id order:
--   version, id, name, type, lower(name) (lowered, lowered by the database as ILIKE lowers
--   it), and the course's public classes in (start_date, id) order as three
--   arrays of the same length: ids, starts, ends (dates as days since 1970-01-01; infinity
--   and -infinity as the largest and smallest int4, which keeps their order);
--   fold: lower() of the ASCII letters under the names' collation, or NULL when the
--   database is not UTF-8 (then ILIKE does not lower whole strings, and the edge leaves
--   name searches to search.sql); classes: the number of classes of all the rows, so that
--   the edge can allocate its arrays once.
-- Argument: $1 the ASCII letters 'A'-'Z' and 'a'-'z'.
SELECT v.version, co.id, co.name, co.type, co.lowered, co.ids, co.starts, co.ends, co.fold, co.classes
FROM catalogue_search_version v
LEFT JOIN (
    SELECT
        co.id,
        co.name,
        co.type,
        lower(co.name) AS lowered,
        COALESCE(cl.ids, '{}') AS ids,
        COALESCE(cl.starts, '{}') AS starts,
        COALESCE(cl.ends, '{}') AS ends,
        CASE WHEN current_setting('server_encoding') = 'UTF8'
            THEN lower(left(co.name, 0) || $1::text) END AS fold,
        SUM(COALESCE(cardinality(cl.ids), 0)) OVER () AS classes
    FROM catalogue_courses co
    LEFT JOIN (
        -- array_agg keeps the order of the rows it is given: (start_date, id) within a course, as
        -- classes_public_course_start_idx reads them (the edge checks it, and sorts if not).
        SELECT c.course_id, array_agg(c.id) AS ids, array_agg(c.start) AS starts, array_agg(c."end") AS ends
        FROM (
            SELECT
                course_id,
                id,
                CASE WHEN isfinite(start_date) THEN start_date - DATE '1970-01-01'
                     WHEN start_date > DATE '1970-01-01' THEN 2147483647 ELSE -2147483648 END AS start,
                CASE WHEN isfinite(end_date) THEN end_date - DATE '1970-01-01'
                     WHEN end_date > DATE '1970-01-01' THEN 2147483647 ELSE -2147483648 END AS "end"
            FROM catalogue_classes
            WHERE is_public
            ORDER BY course_id, start_date, id
        ) c
        GROUP BY c.course_id
    ) cl ON cl.course_id = co.id
    WHERE co.is_public
) co ON TRUE
ORDER BY co.id
