-- courses_by_id.sql: courses.sql for the courses $1 (a BIGINT array) only: those of them
-- that are public, same columns, ordered by id. A course of $1 that is not returned has no
-- document.
SELECT id, name, type, description
FROM catalogue_courses
WHERE is_public AND id = ANY($1::bigint[])
ORDER BY id
