-- seed_fk_restore.sql: adds back, with the same names and definitions, the foreign keys that
-- seed_fk_drop.sql dropped; adding one checks every row in a single pass. Returns nothing.
DO $$
DECLARE
    fk RECORD;
BEGIN
    FOR fk IN SELECT table_name, name, definition FROM seed_foreign_keys ORDER BY name LOOP
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.table_name, fk.name, fk.definition);
    END LOOP;
END
$$;
