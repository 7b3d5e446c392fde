-- change_class.sql: changes the schedule of one public class of a public course (the lowest
-- id) and returns that class's id. The schedule appears only in the class's own document
-- (search results carry schedule null, course lists none), so the next build has exactly one
-- changed document. clock_timestamp() makes every run a new change.
UPDATE classes
SET schedule = 'Changed by make bench at ' || clock_timestamp()
WHERE id = (
    SELECT cl.id
    FROM classes AS cl
    JOIN courses AS co ON co.id = cl.course_id AND co.is_public
    WHERE cl.is_public
    ORDER BY cl.id
    LIMIT 1
)
RETURNING id;
