-- builder_lock_held.sql: whether this session still holds the session advisory lock named $1
-- (taken by builder_lock.sql or builder_try_lock.sql). Returns one boolean. A bigint
-- advisory key shows in pg_locks as classid (high 32 bits) and objid (low 32 bits), with
-- objsubid 1.
SELECT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
      AND ((classid::bigint << 32) | objid::bigint) = hashtext($1)::bigint
)
