-- A machine of a deleting project reaching Released is what the deletion waits for: this enqueues
-- the project's deletion pass in the same transaction (the job key and queue of
-- server/tenancy/project-deletion.ts enqueueDeletionPass, replacing a pass scheduled later), so the
-- deletion completes as soon as the provider has cleaned the last machine, without polling. Every
-- path to Released goes through an UPDATE of machines.phase, hence a trigger rather than a call in
-- each path: machines_released_wakes_project_deletion (AFTER UPDATE OF phase on machines, when it
-- becomes Released; db/migrations/0014_project_deletion_guard.sql).
CREATE OR REPLACE FUNCTION project_deletion_wake_on_release() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND phase = 'Deleting') THEN
    PERFORM meridian_add_job(
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
