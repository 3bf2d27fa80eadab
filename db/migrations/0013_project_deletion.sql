CREATE TABLE "project_deletion_blockers" (
	"project_id" uuid NOT NULL,
	"object_kind" text NOT NULL,
	"object_id" text NOT NULL,
	"object_name" text NOT NULL,
	"waiting_on" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "project_deletion_blockers_project_id_object_kind_object_id_pk" PRIMARY KEY("project_id","object_kind","object_id")
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "phase" text DEFAULT 'Active' NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "deletion_requested_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "deletion_requested_by" text;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "deletion_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "deletion_next_pass_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "project_deletion_blockers" ADD CONSTRAINT "project_deletion_blockers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "projects_deleting" ON "projects" USING btree ("phase") WHERE "projects"."phase" <> 'Active';--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_phase" CHECK ("projects"."phase" in ('Active', 'Deleting'));--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_deletion_requested" CHECK (("projects"."phase" = 'Deleting') = ("projects"."deletion_requested_at" is not null));