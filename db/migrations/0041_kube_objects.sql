CREATE SEQUENCE "public"."kube_resource_version" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1000 CACHE 1;--> statement-breakpoint
CREATE TABLE "kube_namespaces" (
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"uid" uuid DEFAULT gen_random_uuid() NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"annotations" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"resource_version" bigint DEFAULT nextval('kube_resource_version') NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "kube_namespaces_project_id_name_pk" PRIMARY KEY("project_id","name")
);
--> statement-breakpoint
CREATE TABLE "kube_objects" (
	"uid" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"namespace" text DEFAULT 'default' NOT NULL,
	"name" text NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"annotations" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"finalizers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"managed_fields" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"generation" bigint DEFAULT 1 NOT NULL,
	"resource_version" bigint DEFAULT nextval('kube_resource_version') NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kube_namespaces" ADD CONSTRAINT "kube_namespaces_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kube_objects" ADD CONSTRAINT "kube_objects_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "kube_objects_project_kind_name" ON "kube_objects" USING btree ("project_id","kind","namespace","name");
