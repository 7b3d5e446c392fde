-- upcoming.sql: the upcoming class (D3) of each public course of $1 (a BIGINT array) that
-- has one: its public class starting on or after $2 (today, a DATE) with the earliest start,
-- ties broken by the lowest id; fullness does not matter. Same columns as classes.sql,
-- ordered by course_id. A course of $1 that is not returned has no upcoming class. Each
-- course is one step along classes_public_course_start_idx.
SELECT up.id,
       up.course_id,
       up.start_date,
       up.end_date,
       up.schedule,
       up.cost,
       up.seat_limit,
       up.down_payment,
       (SELECT COUNT(*) FROM catalogue_registrations rg WHERE rg.class_id = up.id) AS seats_taken,
       ro.name AS room,
       ro.location_name,
       ro.city,
       ro.state,
       ro.zip,
       ro.country
FROM catalogue_courses AS co
CROSS JOIN LATERAL (
    SELECT cl.*
    FROM catalogue_classes AS cl
    WHERE cl.course_id = co.id AND cl.is_public AND cl.start_date >= $2::date
    ORDER BY cl.start_date, cl.id
    LIMIT 1
) AS up
LEFT JOIN catalogue_rooms AS ro ON ro.id = up.room_id
WHERE co.is_public AND co.id = ANY($1::bigint[])
ORDER BY up.course_id
