-- builder_try_lock.sql: tries to take the session advisory lock named $1 without waiting.
-- Returns one boolean: true when this session now holds it, false when another builder does.
SELECT pg_try_advisory_lock(hashtext($1))
