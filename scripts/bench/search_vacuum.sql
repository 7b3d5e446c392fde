-- search_vacuum.sql (make bench): vacuums and analyzes the tables the class search reads, so
-- that their visibility map is as autovacuum keeps it on a live database, and returns the
-- share (percent) of classes' pages now marked all-visible. The search's index-only scans
-- read the table for every entry on a page not so marked, and a dataset reused from an
-- earlier run can have none marked: a seed's VACUUM that ran while another session held an
-- older snapshot marks nothing, and nothing vacuums the data again. VACUUM cannot run in a
-- transaction: psql runs each statement of this file alone.
VACUUM (ANALYZE) courses, classes, registrations;
SELECT round(100.0 * relallvisible / GREATEST(relpages, 1)) FROM pg_class WHERE relname = 'classes';
