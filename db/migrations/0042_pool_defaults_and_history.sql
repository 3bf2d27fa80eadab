-- A child pool is carved for a purpose: claims and pod blocks that name no pool come from the
-- network's root pools, and from a child pool only when it is marked as the network's default
-- (`is_default`). Existing child pools are not defaults: the claims that name them still land there.
ALTER TABLE "ip_pools" ADD COLUMN "is_default" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- A machine's timeline is built from events: each provider operation outcome and each wait with
-- its reason is recorded by a trigger (the functions' current text: server/fleet/sql/).
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION machine_wait_history() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF NEW.phase = OLD.phase AND NEW.phase_reason IS DISTINCT FROM OLD.phase_reason AND NEW.phase_reason IS NOT NULL THEN
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason, after)
    VALUES ('system', NULL, 'reconciler', NEW.project_id, 'machine.wait', 'machine', NEW.id::text, NEW.name, NEW.phase_reason,
            jsonb_build_object('phase', NEW.phase));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER provider_operation_history AFTER INSERT OR UPDATE ON provider_operations FOR EACH ROW EXECUTE FUNCTION provider_operation_history();
--> statement-breakpoint
CREATE TRIGGER machine_wait_history AFTER UPDATE OF phase_reason ON machines FOR EACH ROW EXECUTE FUNCTION machine_wait_history();
