-- student.sql: what the class read adds for a signed-in student (D32), as one row:
--   registration_id BIGINT: the id of the student's registration in the class, the lowest
--     when there are several; NULL when there is none;
--   prev_reg_test_date DATE: the latest test_date of the student's registrations in the
--     other classes of the same course; NULL when there is none.
-- Parameters: $1 the student, the JWT's student claim as text (edge.jwt.student_claim, D31);
-- $2 the class id and $3 its course id (BIGINT), as the snapshot's document gives them.
-- student_id is a BIGINT here, so a claim that is not an integer of at most 18 digits is
-- turned into NULL before the cast and matches nobody (a cast of it would fail the query).
-- Both lookups use registrations_student_idx.
SELECT
    (SELECT min(r.id)
     FROM catalogue_registrations AS r
     WHERE r.student_id = (CASE WHEN $1::text ~ '^-?[0-9]{1,18}$' THEN $1::text END)::bigint
       AND r.class_id = $2::bigint) AS registration_id,
    (SELECT max(r.test_date)
     FROM catalogue_registrations AS r
     JOIN catalogue_classes AS c ON c.id = r.class_id
     WHERE r.student_id = (CASE WHEN $1::text ~ '^-?[0-9]{1,18}$' THEN $1::text END)::bigint
       AND r.class_id <> $2::bigint
       AND c.course_id = $3::bigint) AS prev_reg_test_date
