-- Hand-written: drizzle cannot express triggers.
--
-- 1. A project being deleted accepts nothing new: every
-- insert of a tenant object (or of a token, grant, increase request or membership) into a project
-- whose phase is not Active is refused with SQLSTATE 'MP001', which the API maps to
-- 409 ProjectDeleting — whatever path the insert takes (console, REST, CLI, a SQL function such as
-- ipam_claim_create).
--
-- The check reads the phase without locking the project row, so an insert that began before the
-- deletion committed can still land. That is safe because deletion is level-triggered: its passes
-- release whatever they find, and its final step locks the project row FOR UPDATE (which waits for
-- every in-flight insert's foreign-key lock on that row) before checking that nothing is left and
-- deleting it. Pod leases are not guarded here (the CNI hot path): deletion revokes every token of
-- the project in the transaction that starts it, so no CNI call reaches a deleting project.
-- Restoring a backup (db/backup.ts) loads rows that already existed, so its transaction sets
-- `meridian.loading_backup` and the guard stands aside.
CREATE OR REPLACE FUNCTION project_refuse_new_objects() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_slug text;
BEGIN
  IF NEW.project_id IS NULL OR current_setting('meridian.loading_backup', true) = 'on' THEN
    RETURN NEW;
  END IF;
  SELECT slug INTO v_slug FROM projects WHERE id = NEW.project_id AND phase <> 'Active';
  IF FOUND THEN
    RAISE EXCEPTION 'project "%" is being deleted: nothing new can be created in it', v_slug
      USING ERRCODE = 'MP001', DETAIL = v_slug, TABLE = TG_TABLE_NAME;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER networks_project_active BEFORE INSERT ON networks FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER ip_pools_project_active BEFORE INSERT ON ip_pools FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER ip_claims_project_active BEFORE INSERT ON ip_claims FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER clusters_project_active BEFORE INSERT ON clusters FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER machines_project_active BEFORE INSERT ON machines FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER api_tokens_project_active BEFORE INSERT ON api_tokens FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER resource_grants_project_active BEFORE INSERT ON resource_grants FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER quota_increase_requests_project_active BEFORE INSERT ON quota_increase_requests FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
CREATE TRIGGER memberships_project_active BEFORE INSERT ON memberships FOR EACH ROW EXECUTE FUNCTION project_refuse_new_objects();
--> statement-breakpoint
-- 2. A machine of a deleting project reaching Released is what the deletion waits for: it enqueues the
-- project's deletion pass in the same transaction (the job key and queue of
-- server/tenancy/project-deletion.ts enqueueDeletionPass, replacing a pass scheduled later), so the
-- deletion completes as soon as the provider has cleaned the last machine, without polling. Every
-- path to Released goes through an UPDATE of machines.phase, hence a trigger rather than a call in
-- each path.
CREATE OR REPLACE FUNCTION project_deletion_wake_on_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND phase = 'Deleting') THEN
    PERFORM graphile_worker.add_job(
      'project__delete',
      json_build_object('projectId', NEW.project_id),
      queue_name => 'project-delete:' || NEW.project_id::text,
      job_key => 'project-delete:' || NEW.project_id::text,
      job_key_mode => 'replace'
    );
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER machines_released_wakes_project_deletion AFTER UPDATE OF phase ON machines
  FOR EACH ROW WHEN (NEW.phase = 'Released' AND OLD.phase IS DISTINCT FROM 'Released')
  EXECUTE FUNCTION project_deletion_wake_on_release();
