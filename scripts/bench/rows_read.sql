-- rows_read.sql: the rows the catalogue's five tables have given out so far, as PostgreSQL's
-- statistics count them: rows read by sequential scans plus index entries read by index
-- scans (index-only ones included). make bench takes the difference over one build.
SELECT (SELECT COALESCE(SUM(seq_tup_read), 0) FROM pg_stat_user_tables
        WHERE relname IN ('courses', 'classes', 'rooms', 'locations', 'registrations'))
     + (SELECT COALESCE(SUM(idx_tup_read), 0) FROM pg_stat_user_indexes
        WHERE relname IN ('courses', 'classes', 'rooms', 'locations', 'registrations'))
