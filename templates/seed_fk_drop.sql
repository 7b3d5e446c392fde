-- seed_fk_drop.sql: notes the foreign keys of the tables builder seed fills in the temporary
-- table seed_foreign_keys and drops them, so that seed_fk_restore.sql checks them once, in
-- bulk, after the COPY instead of row by row during it (the PostgreSQL manual, "Populating a
-- Database"; it makes a million registrations load about twice as fast). Runs inside the
-- seed's transaction, so a failed seed gets them back. Returns nothing.
CREATE TEMPORARY TABLE seed_foreign_keys ON COMMIT DROP AS
SELECT conrelid::regclass AS table_name, conname AS name, pg_get_constraintdef(oid) AS definition
FROM pg_constraint
WHERE contype = 'f'
  AND conrelid IN ('courses'::regclass, 'locations'::regclass, 'rooms'::regclass,
                   'classes'::regclass, 'registrations'::regclass);

DO $$
DECLARE
    fk RECORD;
BEGIN
    FOR fk IN SELECT table_name, name FROM seed_foreign_keys LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.table_name, fk.name);
    END LOOP;
END
$$;
