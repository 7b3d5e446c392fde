-- pairs.sql: $1 registrations of a student in a public class of a public course, spread over
-- the whole table in a fixed pseudo-random order (by a hash of the id, so every run of the
-- bench draws the same ones): student_id TEXT, class_id BIGINT.
SELECT r.student_id::text, r.class_id
FROM registrations AS r
JOIN classes AS cl ON cl.id = r.class_id AND cl.is_public
JOIN courses AS co ON co.id = cl.course_id AND co.is_public
WHERE r.student_id IS NOT NULL
ORDER BY md5(r.id::text)
LIMIT $1
