-- builder_lock.sql: takes the session advisory lock named $1 (hashed to a lock key), waiting
-- until the builder that holds it releases it. Returns nothing. Only one builder publishes
-- at a time; the lock is released by builder_unlock.sql or when the session ends.
SELECT pg_advisory_lock(hashtext($1))
