-- Hand-written: drizzle cannot express triggers. The audit log is append-only; this makes that a
-- property of the database rather than a convention of the application. The trigger's function is
-- source code, db/sql/events_refuse_change.sql (db/migrate.ts applies trigger functions before the
-- migrations that create their triggers).
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_refuse_change();
