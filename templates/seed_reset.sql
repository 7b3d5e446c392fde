-- seed_reset.sql: empties the tables that builder seed fills and restarts their ids; returns
-- nothing. api_tokens is kept. Without CASCADE, a provider table that references these
-- makes this fail rather than be emptied too.
TRUNCATE registrations, classes, rooms, locations, courses RESTART IDENTITY
