-- Moves rows written for the reference schema, loaded into the tables of schema
-- "reference" (see testkit.Laravel), into the example's tables, as the same catalogue:
-- each room becomes a venue with its location's address, costs and down payments become
-- prices and deposits in currency units, visibility a status, registrations enrolments.
INSERT INTO courses (id, title, delivery, summary, published)
SELECT id, name, CASE type WHEN 'Online' THEN 'online' WHEN 'Brick and Mortar' THEN 'classroom' ELSE 'blended' END,
       description, is_public
FROM reference.courses;
INSERT INTO venues (id, site, room, city, region, postcode, country_code)
SELECT ro.id, lo.name, ro.name, lo.city, lo.state, lo.zip, lo.country
FROM reference.rooms ro JOIN reference.locations lo ON lo.id = ro.location_id;
INSERT INTO course_sessions (id, course_id, venue_id, starts_on, ends_on, timetable, price, capacity, deposit, status)
SELECT id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment / 100.0,
       CASE WHEN is_public THEN 'published' ELSE 'draft' END
FROM reference.classes;
INSERT INTO enrolments (id, course_session_id, user_id, exam_date, status)
SELECT id, class_id, student_id, test_date, 'confirmed' FROM reference.registrations;
DROP SCHEMA reference CASCADE;
