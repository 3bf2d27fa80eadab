CREATE TABLE "allowance_buckets" (
	"project_id" uuid NOT NULL,
	"resource_type" text NOT NULL,
	"limit" bigint DEFAULT 0 NOT NULL,
	"allocated" bigint DEFAULT 0 NOT NULL,
	"claim_count" integer DEFAULT 0 NOT NULL,
	"grant_count" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "allowance_buckets_project_id_resource_type_pk" PRIMARY KEY("project_id","resource_type"),
	CONSTRAINT "allowance_buckets_sane" CHECK ("allowance_buckets"."allocated" >= 0 and "allowance_buckets"."limit" >= 0 and "allowance_buckets"."claim_count" >= 0 and "allowance_buckets"."grant_count" >= 0)
);
--> statement-breakpoint
CREATE TABLE "claim_creation_policies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"trigger_kind" text NOT NULL,
	"constraints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"claim_name_template" text NOT NULL,
	"requests" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"ready" boolean DEFAULT false NOT NULL,
	"ready_reason" text DEFAULT 'Pending' NOT NULL,
	"ready_message" text DEFAULT '' NOT NULL,
	"generation" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "claim_creation_policies_name_unique" UNIQUE("name"),
	CONSTRAINT "claim_creation_policies_trigger_kind_unique" UNIQUE("trigger_kind")
);
--> statement-breakpoint
CREATE TABLE "grant_creation_policies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"trigger_kind" text DEFAULT 'Project' NOT NULL,
	"constraints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"grant_name_template" text NOT NULL,
	"allowances" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"ready" boolean DEFAULT false NOT NULL,
	"ready_reason" text DEFAULT 'Pending' NOT NULL,
	"ready_message" text DEFAULT '' NOT NULL,
	"generation" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "grant_creation_policies_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "quota_increase_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"resource_type" text NOT NULL,
	"amount" bigint NOT NULL,
	"reason" text NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"requested_by" text NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"decision_reason" text,
	"approved_amount" bigint,
	"grant_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quota_increase_requests_amount" CHECK ("quota_increase_requests"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "resource_claims" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"requests" jsonb NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"message" text NOT NULL,
	"allocations" jsonb NOT NULL,
	"ref_kind" text NOT NULL,
	"ref_name" text NOT NULL,
	"ref_uid" text,
	"policy_name" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"released_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "resource_grants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"allowances" jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"active_reason" text DEFAULT 'AllResourceTypesRegistered' NOT NULL,
	"active_message" text DEFAULT '' NOT NULL,
	"source" text NOT NULL,
	"source_ref" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "resource_registrations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"resource_type" text NOT NULL,
	"consumer_kind" text DEFAULT 'Project' NOT NULL,
	"type" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"base_unit" text NOT NULL,
	"display_unit" text NOT NULL,
	"unit_conversion_factor" bigint DEFAULT 1 NOT NULL,
	"claiming_kinds" text[] NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"active_reason" text DEFAULT 'RegistrationActive' NOT NULL,
	"active_message" text DEFAULT '' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "resource_registrations_resource_type_unique" UNIQUE("resource_type")
);
--> statement-breakpoint
ALTER TABLE "allowance_buckets" ADD CONSTRAINT "allowance_buckets_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quota_increase_requests" ADD CONSTRAINT "quota_increase_requests_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quota_increase_requests" ADD CONSTRAINT "quota_increase_requests_grant_id_resource_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."resource_grants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "resource_claims" ADD CONSTRAINT "resource_claims_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "resource_grants" ADD CONSTRAINT "resource_grants_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "quota_increase_requests_status" ON "quota_increase_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "quota_increase_requests_project" ON "quota_increase_requests" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "quota_increase_requests_one_pending" ON "quota_increase_requests" USING btree ("project_id","resource_type") WHERE "quota_increase_requests"."status" = 'Pending';--> statement-breakpoint
CREATE UNIQUE INDEX "resource_claims_live_name" ON "resource_claims" USING btree ("project_id","name") WHERE "resource_claims"."status" = 'Granted' and "resource_claims"."released_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "resource_claims_live_ref" ON "resource_claims" USING btree ("project_id","ref_kind","ref_name") WHERE "resource_claims"."status" = 'Granted' and "resource_claims"."released_at" is null;--> statement-breakpoint
CREATE INDEX "resource_claims_project_created" ON "resource_claims" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "resource_grants_project_name" ON "resource_grants" USING btree ("project_id","name");