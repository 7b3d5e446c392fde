-- search.sql: one page of the live class search (spec 4.3, 4.4; D4, D6, D11, D12, D29), in
-- one round trip. Each row is one class of the page, with the number of matches across all
-- pages (total) beside it, so a page needs no second query. Returns:
--   id, course_id, course (name), start_date, end_date, type (course type),
--   city, state (NULL for Online courses and for classes without a room),
--   cost, available_seats (NULL when uncapped, never below 0), total.
-- Arguments (a NULL filter is absent; the edge sets plan_cache_mode=force_custom_plan so the
-- planner sees through the NULL checks to the right index):
--   $1 today (D1), $2 start, $3 end, $4 date (dates), $5 search (course-name substring with
--   \, % and _ already escaped, text), $6 course id (bigint), $7 limit, $8 offset.
-- Registrations are counted only for the classes of the page, after LIMIT.
SELECT
    p.id,
    p.course_id,
    p.course,
    p.start_date,
    p.end_date,
    p.type,
    CASE WHEN p.type = 'Online' THEN NULL ELSE l.city END AS city,
    CASE WHEN p.type = 'Online' THEN NULL ELSE l.state END AS state,
    p.cost,
    CASE WHEN p.seat_limit IS NOT NULL THEN GREATEST(p.seat_limit - t.taken, 0) END AS available_seats,
    p.total
FROM (
    SELECT
        cl.id, cl.course_id, co.name AS course, cl.start_date, cl.end_date, co.type,
        cl.room_id, cl.cost, cl.seat_limit,
        COUNT(*) OVER () AS total
    FROM classes cl
    JOIN courses co ON co.id = cl.course_id
    WHERE cl.is_public
      AND co.is_public
      AND (cl.start_date >= $1::date OR co.type = 'Online')
      AND ($2::date IS NULL OR cl.start_date >= $2::date)
      AND ($3::date IS NULL OR cl.start_date <= $3::date)
      AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
      AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
      AND ($6::bigint IS NULL OR cl.course_id = $6::bigint)
    ORDER BY cl.start_date, cl.id
    LIMIT $7::bigint OFFSET $8::bigint
) p
LEFT JOIN rooms r ON r.id = p.room_id
LEFT JOIN locations l ON l.id = r.location_id
CROSS JOIN LATERAL (
    SELECT COUNT(*) AS taken FROM registrations rg WHERE rg.class_id = p.id AND p.seat_limit IS NOT NULL
) t
ORDER BY p.start_date, p.id
