-- Hand-written: drizzle cannot express triggers.
--
-- 1. A project being deleted accepts nothing new: an insert of a tenant object (or of a token,
-- grant, increase request or membership) into a project whose phase is not Active is refused
-- (server/tenancy/sql/project_refuse_new_objects.sql, the triggers' function).
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
-- 2. A machine of a deleting project reaching Released wakes the project's deletion pass
-- (server/tenancy/sql/project_deletion_wake_on_release.sql).
CREATE TRIGGER machines_released_wakes_project_deletion AFTER UPDATE OF phase ON machines
  FOR EACH ROW WHEN (NEW.phase = 'Released' AND OLD.phase IS DISTINCT FROM 'Released')
  EXECUTE FUNCTION project_deletion_wake_on_release();
