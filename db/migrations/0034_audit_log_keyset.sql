-- Hand-written. The audit log is paged newest first by (at, id), filtered by project, object kind,
-- action, actor and time range (server/audit/events.ts): one index per filter, each ending in
-- (at, id), so that a filtered page reads one index range instead of sorting the matches.
CREATE INDEX IF NOT EXISTS "events_at_id" ON "events" USING btree ("at", "id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_project_at_id" ON "events" USING btree ("project_id", "at", "id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_object_type_at_id" ON "events" USING btree ("object_type", "at", "id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_action_at_id" ON "events" USING btree ("action", "at", "id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_actor_at_id" ON "events" USING btree ("actor_label", "at", "id");--> statement-breakpoint
DROP INDEX IF EXISTS "events_project_at";--> statement-breakpoint
DROP INDEX IF EXISTS "events_at";--> statement-breakpoint
-- Event names say what happened: a tenant's release of a machine was recorded as `machine.delete`,
-- an operator's forced release as `machine.forceRelease` and a refused request as `machine.reject`.
-- The log is append-only (trigger events_append_only); this one rename of history is the exception.
ALTER TABLE "events" DISABLE TRIGGER "events_append_only";--> statement-breakpoint
UPDATE "events" SET "action" = CASE "action"
    WHEN 'machine.delete' THEN 'machine.release.requested'
    WHEN 'machine.forceRelease' THEN 'machine.release.forced'
    WHEN 'machine.reject' THEN 'machine.request.rejected'
  END
WHERE "action" IN ('machine.delete', 'machine.forceRelease', 'machine.reject');--> statement-breakpoint
ALTER TABLE "events" ENABLE TRIGGER "events_append_only";
