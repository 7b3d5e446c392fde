-- view_grants.sql: the GRANT statements that give back what roles other than the owner hold
-- on the catalogue_* views of the current schema and on their columns (one statement per
-- row). mapping.sql drops and creates the views, so that a mapping changing their columns
-- applies, and a dropped view loses its grants: builder migrate reads these before and runs
-- them after, in the same transaction, or every upgrade took the edge's and the builder's
-- reads away. They come back granted by the owner, whoever granted them.
WITH views AS (
    SELECT c.oid, c.relowner, c.relacl FROM pg_class c
    WHERE c.relkind = 'v' AND c.relname LIKE 'catalogue\_%'
      AND c.relnamespace = current_schema()::regnamespace
), grants AS (
    SELECT v.oid, NULL::name AS col, a.* FROM views v CROSS JOIN LATERAL aclexplode(v.relacl) a
    WHERE a.grantee <> v.relowner
    UNION ALL
    SELECT v.oid, att.attname, a.* FROM views v
    JOIN pg_attribute att ON att.attrelid = v.oid AND att.attnum > 0 AND NOT att.attisdropped
    CROSS JOIN LATERAL aclexplode(att.attacl) a
    WHERE a.grantee <> v.relowner
)
SELECT format('GRANT %s%s ON %s TO %s%s', g.privilege_type,
              CASE WHEN g.col IS NULL THEN '' ELSE format(' (%I)', g.col) END, g.oid::regclass,
              CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END,
              CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
FROM grants g
LEFT JOIN pg_roles r ON r.oid = g.grantee
ORDER BY 1
