-- seed_analyze.sql: refreshes the planner's statistics of the seeded tables, so that the
-- first searches after a bulk load get good plans; returns nothing.
ANALYZE courses, locations, rooms, classes, registrations
