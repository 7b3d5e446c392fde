-- count.sql: the number of classes the class search matches, alone. The edge runs it only
-- when search.sql returned no row for a page past the first, where no row carries the total
-- (D9: a page past the last still reports the true total). Same rules and arguments $1-$6
-- as search.sql: $1 today, $2 start, $3 end, $4 date, $5 escaped search, $6 course id.
-- It is search.sql's total, counted the same way (see the comments there): without a name
-- or id filter, the public classes of the date range less those of non-public courses;
-- with one, the upcoming classes of the matched courses; plus the past classes of matched
-- Online courses, course by course.
WITH matched AS MATERIALIZED (
    SELECT co.id, co.type = 'Online' AS online
    FROM courses co
    WHERE co.is_public
      AND ($5::text IS NULL OR co.name ILIKE '%' || $5::text || '%' ESCAPE '\')
      AND ($6::bigint IS NULL OR co.id = $6::bigint)
)
SELECT
    CASE WHEN $5::text IS NULL AND $6::bigint IS NULL THEN
        (SELECT COUNT(*)
         FROM classes cl
         WHERE cl.is_public
           AND cl.start_date >= $1::date
           AND ($2::date IS NULL OR cl.start_date >= $2::date)
           AND ($3::date IS NULL OR cl.start_date <= $3::date)
           AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date)))
      - (SELECT COUNT(*)
         FROM courses co
         JOIN classes cl ON cl.course_id = co.id
         WHERE NOT co.is_public AND cl.is_public
           AND cl.start_date >= $1::date
           AND ($2::date IS NULL OR cl.start_date >= $2::date)
           AND ($3::date IS NULL OR cl.start_date <= $3::date)
           AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date)))
    ELSE
        (SELECT COUNT(*)
         FROM matched m
         JOIN classes cl ON cl.course_id = m.id
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
         FROM classes cl
         WHERE cl.course_id = m.id AND cl.is_public
           AND cl.start_date < $1::date
           AND ($2::date IS NULL OR cl.start_date >= $2::date)
           AND ($3::date IS NULL OR cl.start_date <= $3::date)
           AND ($4::date IS NULL OR (cl.start_date <= $4::date AND cl.end_date >= $4::date))
     ) past
     WHERE m.online)
    AS total
