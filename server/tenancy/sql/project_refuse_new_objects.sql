-- A project being deleted accepts nothing new: the <table>_project_active triggers (BEFORE INSERT
-- on networks, ip_pools, ip_claims, clusters, machines, api_tokens, resource_grants,
-- quota_increase_requests and memberships; db/migrations/0014_project_deletion_guard.sql) run this,
-- and an insert into a project whose phase is not Active is refused with SQLSTATE 'MP001', which
-- the API maps to 409 ProjectDeleting, whatever path the insert takes (console, REST, CLI, a SQL
-- function such as ipam_claim_create).
--
-- The check reads the phase without locking the project row, so an insert that began before the
-- deletion committed can still land. That is safe because deletion is level-triggered: its passes
-- release whatever they find, and its final step locks the project row FOR UPDATE (which waits for
-- every in-flight insert's foreign-key lock on that row) before checking that nothing is left and
-- deleting it. Pod leases are not guarded (the CNI hot path): deletion revokes every token of the
-- project in the transaction that starts it, so no CNI call reaches a deleting project. Restoring a
-- backup (db/backup.ts) loads rows that already existed, so its transaction sets
-- `meridian.loading_backup` and the guard stands aside.
CREATE OR REPLACE FUNCTION project_refuse_new_objects() RETURNS trigger
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
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
