-- search.sql: one page of the live class search (spec 4.3, 4.4; D4, D6, D11, D12, D29) in one
-- round trip. Each row is one class of the page, in page order, with the number of matches
-- across all pages (total) beside it. Returns:
--   id, course_id, course (name), start_date, end_date, type (course type),
--   city, state (NULL for Online courses and for classes without a room),
--   cost, available_seats (seat limit minus registrations, never below 0; NULL when
--   uncapped), total.
-- No row at all when the page is past the last; the edge then runs count.sql.
-- Arguments (a NULL filter is absent; the edge sets plan_cache_mode=force_custom_plan so that
-- the planner sees through the NULL checks and picks the index for the filters given):
--   $1 today (D1), $2 start, $3 end, $4 date (dates), $5 search (course-name substring with
--   \, % and _ already escaped), $6 course id, $7 limit, $8 offset.
--
-- Why it is shaped this way (100,000 classes, 1,000,000 registrations):
-- * total is counted on its own, carrying no columns, instead of COUNT(*) OVER () over the
--   page query, which kept every match (with its course name) in memory to number them.
-- * A match is a public class of a public course that is upcoming, or of an Online course
--   whatever its dates (D4). Every past Online class sorts before every upcoming class, so
--   the page is the merge of two walks of the (start_date, id) index, each stopping after
--   limit + offset rows: past classes of Online courses, then upcoming classes. A single
--   walk with "upcoming OR Online" would step over every past in-person class first, which
--   in a provider's years of history is nearly all of them.
-- * The filters are written out in each part because the planner only sees through a NULL
--   filter, and only stops a walk early, in the part of the query that holds it.
-- * Registrations are counted only for the classes of the page, after LIMIT.
WITH total AS (
    SELECT COUNT(*) AS n
    FROM classes cl
    JOIN courses co ON co.id = cl.course_id
    WHERE cl.is_public AND co.is_public
      AND (cl.start_date >= $1::date OR co.type = 'Online')
      AND ($2::date IS NULL OR cl.start_date >= $2::date)
      AND ($3::date IS NULL OR cl.start_date <= $3::date)
      AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
      AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
      AND ($6::bigint IS NULL OR cl.course_id = $6::bigint)
), page AS (
    SELECT b.id, b.start_date
    FROM (
        (SELECT cl.id, cl.start_date
         FROM classes cl
         JOIN courses co ON co.id = cl.course_id
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
         FROM classes cl
         JOIN courses co ON co.id = cl.course_id
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
    CASE WHEN co.type = 'Online' THEN NULL ELSE l.city END AS city,
    CASE WHEN co.type = 'Online' THEN NULL ELSE l.state END AS state,
    cl.cost,
    CASE WHEN cl.seat_limit IS NOT NULL THEN GREATEST(cl.seat_limit - t.taken, 0) END AS available_seats,
    (SELECT n FROM total) AS total
FROM page p
JOIN classes cl ON cl.id = p.id
JOIN courses co ON co.id = cl.course_id
LEFT JOIN rooms r ON r.id = cl.room_id
LEFT JOIN locations l ON l.id = r.location_id
CROSS JOIN LATERAL (
    SELECT COUNT(*) AS taken FROM registrations rg WHERE rg.class_id = cl.id AND cl.seat_limit IS NOT NULL
) t
ORDER BY p.start_date, p.id
