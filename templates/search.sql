-- search.sql: one page of the live class search (spec 4.3, 4.4; D4, D6, D9-D12, D29) in one
-- round trip. Each row is one class of the page, in page order, with the number of matches
-- across all pages (total) beside it. Returns:
--   id, course_id, course (name), start_date, end_date, type (course type),
--   city, state (NULL for Online courses and for classes without a room),
--   cost, available_seats (seat limit minus registrations, never below 0; NULL when
--   uncapped), total.
-- A page with no class (past the last, or nothing matches) is one row whose columns are all
-- NULL but total: the true total is reported on every page (D9).
-- Arguments (a NULL filter is absent; the edge sets plan_cache_mode=force_custom_plan so that
-- the planner sees through the NULL checks, keeps one branch of the CASE below, and picks the
-- index for the filters given):
--   $1 today (D1), $2 start, $3 end, $4 date (dates), $5 search (course-name substring with
--   \, % and _ already escaped), $6 course id, $7 limit, $8 offset.
--
-- A match is a public class of a public course that is upcoming, or of an Online course
-- whatever its dates (D4). Public, Online, the name and the id are attributes of the course,
-- so they are decided on courses (a small table); the class side goes through the partial
-- indexes of public classes (schema.sql). Why it is shaped this way (100,000 classes):
-- * total is exact. It counts index entries and never joins every counted class to its
--   course (a hash join over the range's classes was most of a search's time):
--   - upcoming matches, no name or id filter: every public class of the date range (an
--     index-only count on classes_public_start_end_idx) less those of non-public courses,
--     counted course by course on classes_public_course_start_idx (a few percent of them);
--   - upcoming matches of the courses a name or id keeps (matched), course by course;
--   - past matches, which only Online courses have: the past classes of matched Online
--     courses, counted course by course (a LATERAL count, as the planner otherwise
--     hash-joined the whole past range to the courses, which measured slower).
--   matched is materialized so that the name's ILIKE over every course runs once for both
--   counts (it costs about as much as counting a few thousand index entries).
-- * Every past Online class sorts before every upcoming class, so the page is the merge of
--   two walks in (start_date, id) order, each stopping after limit + offset matches: past
--   classes of Online courses, then upcoming classes. A single walk with "upcoming OR
--   Online" would step over every past in-person class first, which in a provider's years of
--   history is nearly all of them. The walks join courses rather than matched, so that the
--   planner can walk classes_public_start_cover_idx in order and look courses up by key, or,
--   when a name or id keeps few courses, read those courses' classes and sort them.
-- * The filters are written out in each part because the planner only sees through a NULL
--   filter, and only stops a walk early, in the part of the query that holds it.
-- * Registrations, rooms and locations are read only for the classes of the page, after
--   LIMIT. The location is a subquery planned on its own (OFFSET 0 keeps it out of the join
--   search): the query is planned for every search, and a six-way join took longer to plan.
WITH matched AS MATERIALIZED (
    SELECT co.id, co.type = 'Online' AS online
    FROM catalogue_courses co
    WHERE co.is_public
      AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
      AND ($6::bigint IS NULL OR co.id = $6::bigint)
), total AS (
    SELECT
        CASE WHEN $5::text IS NULL AND $6::bigint IS NULL THEN
            (SELECT COUNT(*)
             FROM catalogue_classes cl
             WHERE cl.is_public
               AND cl.start_date >= $1::date
               AND ($2::date IS NULL OR cl.start_date >= $2::date)
               AND ($3::date IS NULL OR cl.start_date <= $3::date)
               AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date)))
          - (SELECT COUNT(*)
             FROM catalogue_courses co
             JOIN catalogue_classes cl ON cl.course_id = co.id
             WHERE NOT co.is_public AND cl.is_public
               AND cl.start_date >= $1::date
               AND ($2::date IS NULL OR cl.start_date >= $2::date)
               AND ($3::date IS NULL OR cl.start_date <= $3::date)
               AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date)))
        ELSE
            (SELECT COUNT(*)
             FROM matched m
             JOIN catalogue_classes cl ON cl.course_id = m.id
             WHERE cl.is_public
               AND cl.start_date >= $1::date
               AND ($2::date IS NULL OR cl.start_date >= $2::date)
               AND ($3::date IS NULL OR cl.start_date <= $3::date)
               AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date)))
        END
      + (SELECT COALESCE(SUM(past.n), 0)::bigint
         FROM matched m
         CROSS JOIN LATERAL (
             SELECT COUNT(*) AS n
             FROM catalogue_classes cl
             WHERE cl.course_id = m.id AND cl.is_public
               AND cl.start_date < $1::date
               AND ($2::date IS NULL OR cl.start_date >= $2::date)
               AND ($3::date IS NULL OR cl.start_date <= $3::date)
               AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
         ) past
         WHERE m.online)
        AS n
), page AS (
    SELECT b.id, b.start_date
    FROM (
        (SELECT cl.id, cl.start_date
         FROM catalogue_classes cl
         JOIN catalogue_courses co ON co.id = cl.course_id
         WHERE cl.is_public AND co.is_public
           AND cl.start_date < $1::date AND co.type = 'Online'
           AND ($2::date IS NULL OR cl.start_date >= $2::date)
           AND ($3::date IS NULL OR cl.start_date <= $3::date)
           AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
           AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
           AND ($6::bigint IS NULL OR cl.course_id = $6::bigint)
         ORDER BY cl.start_date, cl.id
         LIMIT $7::bigint + LEAST($8::bigint, 9223372036854775807 - $7::bigint))
        UNION ALL
        (SELECT cl.id, cl.start_date
         FROM catalogue_classes cl
         JOIN catalogue_courses co ON co.id = cl.course_id
         WHERE cl.is_public AND co.is_public
           AND cl.start_date >= $1::date
           AND ($2::date IS NULL OR cl.start_date >= $2::date)
           AND ($3::date IS NULL OR cl.start_date <= $3::date)
           AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
           AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
           AND ($6::bigint IS NULL OR cl.course_id = $6::bigint)
         ORDER BY cl.start_date, cl.id
         LIMIT $7::bigint + LEAST($8::bigint, 9223372036854775807 - $7::bigint))
    ) b
    -- Past the last page: walk nothing.
    WHERE $8::bigint < (SELECT n FROM total)
    ORDER BY b.start_date, b.id
    LIMIT $7::bigint OFFSET $8::bigint
)
SELECT
    cl.id,
    cl.course_id,
    co.name AS course,
    cl.start_date,
    cl.end_date,
    co.type,
    CASE WHEN co.type = 'Online' THEN NULL ELSE loc.city END AS city,
    CASE WHEN co.type = 'Online' THEN NULL ELSE loc.state END AS state,
    cl.cost,
    CASE WHEN cl.seat_limit IS NOT NULL THEN GREATEST(cl.seat_limit - (
        SELECT COUNT(*) FROM catalogue_registrations rg WHERE rg.class_id = cl.id
    ), 0) END AS available_seats,
    t.n AS total
FROM total t
LEFT JOIN page p ON TRUE
LEFT JOIN catalogue_classes cl ON cl.id = p.id
LEFT JOIN catalogue_courses co ON co.id = cl.course_id
LEFT JOIN LATERAL (
    SELECT l.city, l.state
    FROM catalogue_rooms l
    WHERE l.id = cl.room_id
    OFFSET 0
) loc ON TRUE
ORDER BY p.start_date, p.id
