-- Utilization history (server/capacity): one row per series, one per series and period of 60, 3600
-- or 86400 seconds. Written by the sampler (server/capacity/sql/capacity_sample.sql) from the exact
-- counters, pruned by capacity__prune.
CREATE TABLE "capacity_series" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "capacity_series_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"kind" text NOT NULL,
	"project_id" uuid NOT NULL,
	"object_id" uuid NOT NULL,
	"network_id" uuid,
	"family" smallint,
	"resource_type" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "capacity_series_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "capacity_samples" (
	"series_id" integer NOT NULL,
	"step" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"used" numeric(40, 0) NOT NULL,
	"capacity" numeric(40, 0) NOT NULL,
	CONSTRAINT "capacity_samples_series_id_step_at_pk" PRIMARY KEY("series_id","step","at")
);
--> statement-breakpoint
ALTER TABLE "capacity_series" ADD CONSTRAINT "capacity_series_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- No foreign key from samples to series (see server/capacity/sql/capacity_series_delete_samples.sql).
CREATE TRIGGER capacity_series_delete_samples BEFORE DELETE ON capacity_series FOR EACH ROW EXECUTE FUNCTION capacity_series_delete_samples();
--> statement-breakpoint
CREATE INDEX "capacity_series_object" ON "capacity_series" USING btree ("object_id");--> statement-breakpoint
CREATE INDEX "capacity_series_project" ON "capacity_series" USING btree ("project_id","kind");
