-- dates.sql (make bench): the first and last start date of the public classes starting on
-- or after $1 (today), so that date filters of the search mix fall where classes are.
SELECT MIN(start_date), MAX(start_date)
FROM classes
WHERE is_public AND start_date >= $1
