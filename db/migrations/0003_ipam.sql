CREATE TABLE "ip_allocations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"pool_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"network_id" uuid NOT NULL,
	"cidr" "cidr" NOT NULL,
	"kind" text NOT NULL,
	"claim_id" uuid,
	"child_pool_id" uuid,
	"size" numeric(40, 0) NOT NULL,
	"retained_name" text,
	"retained_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ip_claims" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"network_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"name" text NOT NULL,
	"family" smallint NOT NULL,
	"prefix_length" smallint NOT NULL,
	"requested_cidr" "cidr",
	"reclaim_policy" text DEFAULT 'Delete' NOT NULL,
	"retention_seconds" integer DEFAULT 604800 NOT NULL,
	"owner_ref" jsonb,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"spec_hash" text NOT NULL,
	"allocation_id" uuid NOT NULL,
	"allocated_cidr" "cidr" NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ip_free_blocks" (
	"pool_id" uuid NOT NULL,
	"cidr" "cidr" NOT NULL,
	"prefix_length" smallint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ip_pools" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"network_id" uuid NOT NULL,
	"parent_pool_id" uuid,
	"name" text NOT NULL,
	"kind" text DEFAULT 'Root' NOT NULL,
	"cidr" "cidr" NOT NULL,
	"family" smallint NOT NULL,
	"min_prefix_length" smallint NOT NULL,
	"max_prefix_length" smallint NOT NULL,
	"default_prefix_length" smallint NOT NULL,
	"strategy" text DEFAULT 'FirstFit' NOT NULL,
	"reserve_leading" integer DEFAULT 0 NOT NULL,
	"reserve_trailing" integer DEFAULT 0 NOT NULL,
	"capacity" numeric(40, 0) NOT NULL,
	"allocated" numeric(40, 0) DEFAULT '0' NOT NULL,
	"allocation_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "networks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ip_allocations" ADD CONSTRAINT "ip_allocations_pool_id_ip_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."ip_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_allocations" ADD CONSTRAINT "ip_allocations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_allocations" ADD CONSTRAINT "ip_allocations_network_id_networks_id_fk" FOREIGN KEY ("network_id") REFERENCES "public"."networks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_claims" ADD CONSTRAINT "ip_claims_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_claims" ADD CONSTRAINT "ip_claims_network_id_networks_id_fk" FOREIGN KEY ("network_id") REFERENCES "public"."networks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_claims" ADD CONSTRAINT "ip_claims_pool_id_ip_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."ip_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_free_blocks" ADD CONSTRAINT "ip_free_blocks_pool_id_ip_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."ip_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_pools" ADD CONSTRAINT "ip_pools_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_pools" ADD CONSTRAINT "ip_pools_network_id_networks_id_fk" FOREIGN KEY ("network_id") REFERENCES "public"."networks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "networks" ADD CONSTRAINT "networks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "networks" ADD CONSTRAINT "networks_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ip_allocations_pool_cidr" ON "ip_allocations" USING btree ("pool_id","cidr");--> statement-breakpoint
CREATE INDEX "ip_allocations_claim" ON "ip_allocations" USING btree ("claim_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ip_allocations_retained_name" ON "ip_allocations" USING btree ("project_id","retained_name") WHERE "ip_allocations"."retained_name" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "ip_claims_project_name" ON "ip_claims" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "ip_claims_network" ON "ip_claims" USING btree ("network_id","created_at");--> statement-breakpoint
CREATE INDEX "ip_claims_pool" ON "ip_claims" USING btree ("pool_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ip_free_blocks_pk" ON "ip_free_blocks" USING btree ("pool_id","cidr");--> statement-breakpoint
CREATE INDEX "ip_free_blocks_by_size" ON "ip_free_blocks" USING btree ("pool_id","prefix_length","cidr");--> statement-breakpoint
CREATE UNIQUE INDEX "ip_pools_network_name" ON "ip_pools" USING btree ("network_id","name");--> statement-breakpoint
CREATE INDEX "ip_pools_parent" ON "ip_pools" USING btree ("parent_pool_id");--> statement-breakpoint
CREATE INDEX "ip_pools_project" ON "ip_pools" USING btree ("project_id");--> statement-breakpoint
CREATE UNIQUE INDEX "networks_project_name" ON "networks" USING btree ("project_id","name");