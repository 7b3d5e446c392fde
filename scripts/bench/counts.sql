-- counts.sql: one row, the number of courses, classes and registrations; make bench compares
-- it with the dataset it seeded to decide whether the data can be reused.
SELECT (SELECT COUNT(*) FROM courses)       AS courses,
       (SELECT COUNT(*) FROM classes)       AS classes,
       (SELECT COUNT(*) FROM registrations) AS registrations;
