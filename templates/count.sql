-- count.sql: the number of classes the class search matches, alone. The edge runs it only
-- when search.sql returned no row for a page past the first, where no row carries the total
-- (D9: a page past the last still reports the true total). Same rules and arguments $1-$6
-- as search.sql: $1 today, $2 start, $3 end, $4 date, $5 escaped search, $6 course id.
SELECT COUNT(*) AS total
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
