-- change.sql: the change make soak (scripts/soak.sh) makes before each publish, so that every
-- snapshot differs from the one before in the documents most asked for. Returns nothing.
--
-- The cost of the next upcoming public class of the most registered course and of two random
-- public courses goes up by 1: that class is its course's upcoming_class, so the course list
-- and (for a course that ranks) popular change, and so does the class's own document.
-- Then one new public class is added to a random public course, a month ahead.
-- Nothing is ever made private or removed, so every route of the first snapshot stays in all
-- later ones, which the load generator relies on.
WITH picked AS (
    (
        SELECT cl.course_id AS id
        FROM registrations AS r
        JOIN classes AS cl ON cl.id = r.class_id
        GROUP BY cl.course_id
        ORDER BY COUNT(*) DESC, cl.course_id
        LIMIT 1
    )
    UNION
    (
        SELECT id
        FROM courses
        WHERE is_public
        ORDER BY random()
        LIMIT 2
    )
),
next_class AS (
    SELECT DISTINCT ON (cl.course_id) cl.id
    FROM classes AS cl
    JOIN picked AS p ON p.id = cl.course_id
    WHERE cl.is_public AND cl.start_date >= CURRENT_DATE
    ORDER BY cl.course_id, cl.start_date, cl.id
)
UPDATE classes
SET cost = cost + 1
WHERE id IN (SELECT id FROM next_class);

INSERT INTO classes (course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
SELECT id, NULL, CURRENT_DATE + 30, CURRENT_DATE + 32, 'Added by make soak', 450, 12, NULL, TRUE
FROM courses
WHERE is_public
ORDER BY random()
LIMIT 1;
