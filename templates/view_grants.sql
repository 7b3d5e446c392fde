-- view_grants.sql: the GRANT statements that give back what roles other than the owner hold
-- on the catalogue_* views of the current schema (one statement per row). mapping.sql
-- drops and creates the views, so that a mapping changing their columns applies, and a
-- dropped view loses its grants: builder migrate reads these before and runs them after,
-- in the same transaction, or every upgrade took the edge's and the builder's reads away.
SELECT format('GRANT %s ON %s TO %s%s', a.privilege_type, c.oid::regclass,
              CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END,
              CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
FROM pg_class c
CROSS JOIN LATERAL aclexplode(c.relacl) a
LEFT JOIN pg_roles r ON r.oid = a.grantee
WHERE c.relkind = 'v' AND c.relname LIKE 'catalogue\_%'
  AND c.relnamespace = current_schema()::regnamespace
  AND a.grantee <> c.relowner
ORDER BY 1
