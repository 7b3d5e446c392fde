-- builder_unlock.sql: releases the session advisory lock named $1. Returns one boolean:
-- true when this session held it.
SELECT pg_advisory_unlock(hashtext($1))
