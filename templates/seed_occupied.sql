-- seed_occupied.sql: one row saying, for each table that builder seed fills, whether it
-- already holds any row (seed refuses to mix its rows with existing ones).
SELECT EXISTS (SELECT 1 FROM courses)       AS courses,
       EXISTS (SELECT 1 FROM locations)     AS locations,
       EXISTS (SELECT 1 FROM rooms)         AS rooms,
       EXISTS (SELECT 1 FROM classes)       AS classes,
       EXISTS (SELECT 1 FROM registrations) AS registrations
