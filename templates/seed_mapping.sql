-- seed_mapping.sql: the tables catalogue_feeds names that are not the reference schema's,
-- as one text ('' when none): builder seed fills the reference schema, and refuses a
-- database mapped from other tables (mapping.sql) rather than write tables that may be the
-- provider's own under the same names.
SELECT COALESCE(string_agg(source, ', ' ORDER BY source), '')
FROM catalogue_feeds
WHERE source NOT IN ('courses', 'locations', 'rooms', 'classes', 'registrations')
