-- classes_by_id.sql: classes.sql for the classes $1 (a BIGINT array) only: those of them
-- that are public classes of a public course, same columns, ordered by id. A class of $1
-- that is not returned has no document. Registrations are counted class by class from
-- registrations_class_idx (an index-only count), not grouped over the whole table.
SELECT cl.id,
       cl.course_id,
       cl.start_date,
       cl.end_date,
       cl.schedule,
       cl.cost,
       cl.seat_limit,
       cl.down_payment,
       (SELECT COUNT(*) FROM catalogue_registrations rg WHERE rg.class_id = cl.id) AS seats_taken,
       ro.name AS room,
       ro.location_name,
       ro.city,
       ro.state,
       ro.zip,
       ro.country
FROM catalogue_classes AS cl
JOIN catalogue_courses AS co ON co.id = cl.course_id AND co.is_public
LEFT JOIN catalogue_rooms AS ro ON ro.id = cl.room_id
WHERE cl.is_public AND cl.id = ANY($1::bigint[])
ORDER BY cl.id
