-- changes_classes.sql: the classes a change can affect, public or not, one row each: id and
-- course_id BIGINT. A class is affected when it is named ($1 class ids), belongs to a named
-- course ($2: its name, type and visibility show in the class's document), or sits in a
-- named room ($3) or in a room of a named location ($4). Arguments are BIGINT arrays,
-- empty when nothing of that kind changed. Every part is an index lookup (primary keys,
-- classes_course_idx, classes_room_idx, rooms_location_idx), so the cost follows the size
-- of the change, not of the catalogue.
SELECT cl.id, cl.course_id FROM catalogue_classes cl WHERE cl.id = ANY($1::bigint[])
UNION
SELECT cl.id, cl.course_id FROM catalogue_classes cl WHERE cl.course_id = ANY($2::bigint[])
UNION
SELECT cl.id, cl.course_id FROM catalogue_classes cl WHERE cl.room_id = ANY($3::bigint[])
UNION
SELECT cl.id, cl.course_id
FROM catalogue_rooms ro
JOIN catalogue_classes cl ON cl.room_id = ro.id
WHERE ro.location_id = ANY($4::bigint[])
