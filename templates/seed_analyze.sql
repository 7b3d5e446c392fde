-- seed_analyze.sql: refreshes the planner's statistics of the seeded tables and marks their
-- pages all-visible, so that the first searches after a bulk load get good plans and
-- index-only scans; returns nothing. VACUUM cannot run in a transaction: run it alone.
VACUUM (ANALYZE) courses, locations, rooms, classes, registrations
