-- classes.sql: every public class of a public course (D18, D28), past ones included, one row
-- each, ordered by id. The builder reads the columns by name:
--   id, course_id BIGINT; start_date, end_date DATE; schedule TEXT (may be NULL);
--   cost INTEGER; seat_limit INTEGER (NULL: uncapped); down_payment INTEGER (cents, NULL:
--   payment in full); seats_taken BIGINT (the class's registrations, one seat each);
--   room TEXT (the room's name); location_name, city, state, zip, country TEXT (the room's
--   location). room and the location columns are all NULL when no room is assigned.
-- Registrations are counted once for every class with one GROUP BY and then joined, not by a
-- subquery per class, so the cost stays one pass over registrations.
SELECT cl.id,
       cl.course_id,
       cl.start_date,
       cl.end_date,
       cl.schedule,
       cl.cost,
       cl.seat_limit,
       cl.down_payment,
       COALESCE(taken.n, 0) AS seats_taken,
       ro.name AS room,
       ro.location_name,
       ro.city,
       ro.state,
       ro.zip,
       ro.country
FROM catalogue_classes AS cl
JOIN catalogue_courses AS co ON co.id = cl.course_id AND co.is_public
LEFT JOIN (
    SELECT class_id, COUNT(*) AS n
    FROM catalogue_registrations
    GROUP BY class_id
) AS taken ON taken.class_id = cl.id
LEFT JOIN catalogue_rooms AS ro ON ro.id = cl.room_id
WHERE cl.is_public
ORDER BY cl.id
