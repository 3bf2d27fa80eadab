-- The audit log is append-only: the trigger events_append_only (BEFORE UPDATE OR DELETE on events,
-- db/migrations/0001_events_append_only.sql) runs this for every row and refuses the change, so
-- that is a property of the database rather than a convention of the application. The application
-- role has no UPDATE or DELETE on events either (db/roles.ts).
CREATE OR REPLACE FUNCTION events_refuse_change() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  RAISE EXCEPTION 'events is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
