-- courses.sql: every public course, one row each, ordered by id.
-- The builder reads the columns by name: id BIGINT, name TEXT, type TEXT ('Online',
-- 'Brick and Mortar' or 'Blended'), description TEXT (staff HTML, passed through unchanged;
-- may be NULL). Only public rows leave the database (D28).
SELECT id, name, type, description
FROM catalogue_courses
WHERE is_public
ORDER BY id
