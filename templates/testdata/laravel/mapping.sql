-- mapping.sql of the worked example: a training provider's Laravel application (its tables
-- are in app/tables.sql) mapped to the names the catalogue reads. Put a file like this one
-- in templates.dir and run builder migrate, then builder doctor. What it shows:
-- * other names: course_sessions are classes, venues are rooms with their address,
--   enrolments are registrations;
-- * values to translate: delivery to the three types, prices in currency units to integer
--   costs and deposits to cents, a status and soft deletes (deleted_at) to visibility and to
--   the seats taken;
-- * the indexes the catalogue's queries need on these tables (the reference schema's, on
--   the example's columns and conditions).

-- A class or course is public when published and not deleted.
DROP VIEW IF EXISTS catalogue_courses, catalogue_classes, catalogue_rooms, catalogue_registrations;
CREATE VIEW catalogue_courses AS
    SELECT id,
           title::text AS name,
           CASE delivery WHEN 'online' THEN 'Online' WHEN 'classroom' THEN 'Brick and Mortar'
                         WHEN 'blended' THEN 'Blended' END AS type,
           summary AS description,
           published AND deleted_at IS NULL AS is_public
    FROM courses;
CREATE VIEW catalogue_classes AS
    SELECT id, course_id, venue_id AS room_id, starts_on AS start_date, ends_on AS end_date,
           timetable AS schedule,
           round(price)::integer AS cost,
           capacity AS seat_limit,
           round(deposit * 100)::integer AS down_payment,
           status = 'published' AND deleted_at IS NULL AS is_public
    FROM course_sessions;
-- A venue is its own location.
CREATE VIEW catalogue_rooms AS
    SELECT id, room::text AS name, id AS location_id, site::text AS location_name, city::text,
           region::text AS state, postcode::text AS zip, country_code::text AS country
    FROM venues;
-- A cancelled or deleted enrolment takes no seat.
CREATE VIEW catalogue_registrations AS
    SELECT id, course_session_id AS class_id, user_id AS student_id, exam_date AS test_date
    FROM enrolments
    WHERE status <> 'cancelled' AND deleted_at IS NULL;

-- Which table feeds which name, and which columns of it matter.
DELETE FROM catalogue_feeds;
INSERT INTO catalogue_feeds (source, kind, ids, course_ids, key, watched, searched) VALUES
    ('courses',         'courses',       'id',                NULL,        'id',
        '{id,title,delivery,summary,published,deleted_at}', '{id,title,delivery,published,deleted_at}'),
    ('course_sessions', 'classes',       'id',                'course_id', 'id',
        '{id,course_id,venue_id,starts_on,ends_on,timetable,price,capacity,deposit,status,deleted_at}',
        '{id,course_id,starts_on,ends_on,status,deleted_at}'),
    ('enrolments',      'registrations', 'course_session_id', NULL,        'id',
        '{id,course_session_id,status,deleted_at}', NULL),
    ('venues',          'rooms',         'id',                NULL,        'id',
        '{id,site,room,city,region,postcode,country_code}', NULL);

-- The indexes of the reference schema, on these columns. The search walks public classes
-- by start, counts them by date range, and by course.
CREATE INDEX IF NOT EXISTS course_sessions_public_start_cover_idx ON course_sessions (starts_on, id)
    INCLUDE (course_id, ends_on) WHERE status = 'published' AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS course_sessions_public_start_end_idx ON course_sessions (starts_on, ends_on)
    WHERE status = 'published' AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS course_sessions_public_course_start_idx ON course_sessions (course_id, starts_on, id)
    INCLUDE (ends_on) WHERE status = 'published' AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS course_sessions_course_idx ON course_sessions (course_id);
CREATE INDEX IF NOT EXISTS course_sessions_venue_idx ON course_sessions (venue_id);
-- Seats taken per class, and a signed-in student's enrolments.
CREATE INDEX IF NOT EXISTS enrolments_seat_idx ON enrolments (course_session_id)
    WHERE status <> 'cancelled' AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS enrolments_student_idx ON enrolments (user_id, course_session_id, id)
    INCLUDE (exam_date) WHERE user_id IS NOT NULL AND status <> 'cancelled' AND deleted_at IS NULL;
