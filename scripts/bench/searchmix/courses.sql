-- courses.sql (make bench): every public course's id and name, by id; the search mix draws
-- name fragments and per-course searches from them.
SELECT id, name
FROM courses
WHERE is_public
ORDER BY id
