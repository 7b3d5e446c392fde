-- wal_insert_lsn.sql: run on the primary when a change is noticed: the position in its
-- write-ahead log that every change committed so far lies before, as text (X/Y). The
-- insert position rather than pg_current_wal_lsn(), the write position, because under
-- synchronous_commit = off a commit (and its notification) can come before its WAL is
-- written.
SELECT pg_current_wal_insert_lsn()::text
