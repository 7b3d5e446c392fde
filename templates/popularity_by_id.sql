-- popularity_by_id.sql: popularity.sql for the courses $1 (a BIGINT array) only: the public
-- ones among them with their registrations of all time over all their classes (public or
-- not, past or not), same columns, ordered by course id. Each course's registrations are
-- counted from registrations_class_idx alone (an index-only count) through its classes.
SELECT co.id AS course_id,
       (SELECT COUNT(*)
        FROM catalogue_classes AS cl
        JOIN catalogue_registrations AS rg ON rg.class_id = cl.id
        WHERE cl.course_id = co.id)::BIGINT AS registrations
FROM catalogue_courses AS co
WHERE co.is_public AND co.id = ANY($1::bigint[])
ORDER BY co.id
