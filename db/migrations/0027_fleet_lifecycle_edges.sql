-- A Released machine keeps its row (its history) but no longer holds its name: the name is unique
-- among live machines only. Provider operations gain an operator's acknowledgement, and an index
-- to find later operations on the same device (which resolve earlier failed ones).
DROP INDEX "machines_project_name";--> statement-breakpoint
ALTER TABLE "provider_operations" ADD COLUMN "acknowledged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "provider_operations" ADD COLUMN "acknowledged_by" text;--> statement-breakpoint
ALTER TABLE "provider_operations" ADD COLUMN "acknowledgement" text;--> statement-breakpoint
CREATE UNIQUE INDEX "machines_live_name" ON "machines" USING btree ("project_id","name") WHERE "machines"."phase" <> 'Released';--> statement-breakpoint
CREATE INDEX "provider_operations_capacity" ON "provider_operations" USING btree ("capacity_id","fencing_token");--> statement-breakpoint
CREATE INDEX "machines_project_name" ON "machines" USING btree ("project_id","name","created_at");