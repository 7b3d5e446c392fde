-- replay_lsn.sql: run on the replica before it is read: how far it has replayed the
-- primary's write-ahead log, as text (X/Y); NULL when it is not a standby (then it is the
-- primary itself, or a copy that does not replay, and there is nothing to wait for).
SELECT pg_last_wal_replay_lsn()::text
