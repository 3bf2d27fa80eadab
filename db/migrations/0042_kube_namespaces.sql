DROP INDEX "ip_claims_project_name";--> statement-breakpoint
DROP INDEX "networks_project_name";--> statement-breakpoint
DROP INDEX "kube_objects_project_kind_name";--> statement-breakpoint
ALTER TABLE "kube_objects" ALTER COLUMN "project_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "ip_claims" ADD COLUMN "namespace" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "networks" ADD COLUMN "namespace" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ip_claims_project_namespace_name" ON "ip_claims" USING btree ("project_id","namespace","name");--> statement-breakpoint
CREATE UNIQUE INDEX "networks_project_namespace_name" ON "networks" USING btree ("project_id","namespace","name");--> statement-breakpoint
ALTER TABLE "kube_objects" ADD CONSTRAINT "kube_objects_project_kind_name" UNIQUE NULLS NOT DISTINCT("project_id","kind","namespace","name");