-- schema_objects.sql: the objects that builder migrate creates, changes or removes, each
-- with a text that changes when its definition does: tables and their columns, enum types,
-- views, functions, triggers and indexes, in every schema but the system's (a provider's
-- tables, and so the triggers migrate puts on them, may be in a schema of their own), named
-- with their schema when it is not the current one. builder migrate reads them before and
-- after it applies its statements, to say what it did. Returns kind, name (indexes and
-- triggers with their table), definition.
SELECT 'table' AS kind, q.name || c.relname AS name, '' AS definition
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%' AND c.relkind IN ('r', 'p')
UNION ALL
SELECT 'column', q.name || c.relname || '.' || a.attname,
       format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
       || COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'type', q.name || t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%'
GROUP BY q.name, t.typname
UNION ALL
SELECT 'view', q.name || c.relname, pg_get_viewdef(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%' AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'function', q.name || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', md5(pg_get_functiondef(p.oid))
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%' AND p.prokind = 'f'
UNION ALL
SELECT 'trigger', t.tgname || ' on ' || q.name || c.relname, pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%' AND NOT t.tgisinternal
UNION ALL
SELECT 'index', i.relname || ' on ' || q.name || c.relname, pg_get_indexdef(i.oid)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class c ON c.oid = x.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (SELECT CASE WHEN n.nspname = current_schema() THEN '' ELSE n.nspname || '.' END AS name) q
WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%'
