-- popularity.sql: the popularity score of every public course (D17), one row each, ordered by
-- id: course_id BIGINT and registrations BIGINT, the number of registrations of all time over
-- all the course's classes, public or not, past or not; 0 when it has none. Non-public
-- courses are left out, and of non-public classes only their counts are used, never their ids.
-- Registrations are grouped by class once, then summed per course.
SELECT co.id AS course_id,
       COALESCE(SUM(per_class.n), 0)::BIGINT AS registrations
FROM catalogue_courses AS co
LEFT JOIN catalogue_classes AS cl ON cl.course_id = co.id
LEFT JOIN (
    SELECT class_id, COUNT(*) AS n
    FROM catalogue_registrations
    GROUP BY class_id
) AS per_class ON per_class.class_id = cl.id
WHERE co.is_public
GROUP BY co.id
ORDER BY co.id
