-- A machine that stays in its phase but waits for something else (capacity, approval, the
-- provider) records the new reason as a `machine.wait` event, so its timeline shows each wait and
-- why; a phase change records its own event (server/fleet/phases.ts transitionMachine). Run by the
-- trigger machine_wait_history (AFTER UPDATE OF phase_reason on machines,
-- db/migrations/0045_pool_defaults_and_history.sql).
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
