-- seed_sequences.sql: moves each identity sequence of the seeded tables past the largest id
-- (seed inserts explicit ids), so that later inserts without an id work; returns the next
-- id of each table.
SELECT setval(pg_get_serial_sequence('courses', 'id'), COALESCE(MAX(id), 0) + 1, FALSE) FROM courses;
SELECT setval(pg_get_serial_sequence('locations', 'id'), COALESCE(MAX(id), 0) + 1, FALSE) FROM locations;
SELECT setval(pg_get_serial_sequence('rooms', 'id'), COALESCE(MAX(id), 0) + 1, FALSE) FROM rooms;
SELECT setval(pg_get_serial_sequence('classes', 'id'), COALESCE(MAX(id), 0) + 1, FALSE) FROM classes;
SELECT setval(pg_get_serial_sequence('registrations', 'id'), COALESCE(MAX(id), 0) + 1, FALSE) FROM registrations;
