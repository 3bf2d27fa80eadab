-- Every outcome of a provider operation becomes an event of its machine (or, for the cleanup that
-- returns quarantined capacity, of the capacity), so a machine's timeline is built from what
-- happened: the operation admitted, submitted, answered (succeeded, failed, or an unknown outcome
-- and later its resolution), and each retry with the error that caused it (a provider outage, a
-- lost response). Whatever code moves an operation, the history cannot be skipped. Run by the
-- trigger provider_operation_history (AFTER INSERT OR UPDATE on provider_operations,
-- db/migrations/0045_pool_defaults_and_history.sql).
CREATE OR REPLACE FUNCTION provider_operation_history() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  v_project uuid;
  v_name text;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.state IS NOT DISTINCT FROM OLD.state AND NEW.last_error IS NOT DISTINCT FROM OLD.last_error THEN
    RETURN NULL;
  END IF;
  IF NEW.machine_id IS NOT NULL THEN
    SELECT project_id, name INTO v_project, v_name FROM machines WHERE id = NEW.machine_id;
  END IF;
  INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason, before, after)
  VALUES ('system', NULL, 'provider', v_project, 'operation.' || NEW.kind || '.' || NEW.state,
          CASE WHEN NEW.machine_id IS NULL THEN 'capacity' ELSE 'machine' END,
          coalesce(NEW.machine_id::text, NEW.capacity_id::text), coalesce(v_name, NEW.device_ref),
          CASE WHEN NEW.last_error IS DISTINCT FROM (CASE WHEN TG_OP = 'UPDATE' THEN OLD.last_error END) THEN NEW.last_error END,
          CASE WHEN TG_OP = 'UPDATE' THEN jsonb_build_object('state', OLD.state, 'attempts', OLD.attempts) END,
          jsonb_build_object('id', NEW.id, 'kind', NEW.kind, 'state', NEW.state, 'attempts', NEW.attempts, 'device', NEW.device_ref,
                             'epoch', NEW.epoch, 'fencingToken', NEW.fencing_token));
  RETURN NULL;
END
$$;
