CREATE TABLE "installations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"machine_id" uuid NOT NULL,
	"allocation_id" uuid NOT NULL,
	"image_digest" text NOT NULL,
	"predecessor_id" uuid,
	"operation_id" text NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "locations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"display_name" text NOT NULL,
	"ready" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "locations_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "machine_allocations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"machine_id" uuid NOT NULL,
	"capacity_id" uuid NOT NULL,
	"epoch" bigint NOT NULL,
	"status" text NOT NULL,
	"release_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"released_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "machine_capacity" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_ref" text NOT NULL,
	"class_id" uuid NOT NULL,
	"location_id" uuid NOT NULL,
	"health" text DEFAULT 'Healthy' NOT NULL,
	"available" boolean DEFAULT true NOT NULL,
	"observed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" text DEFAULT 'Available' NOT NULL,
	"state_reason" text,
	"asset_epoch" bigint DEFAULT 0 NOT NULL,
	"fencing_seq" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "machine_capacity_device_ref_unique" UNIQUE("device_ref"),
	CONSTRAINT "machine_capacity_state" CHECK ("machine_capacity"."state" in ('Available','Bound','Cleaning','Quarantined','Retired'))
);
--> statement-breakpoint
CREATE TABLE "machine_classes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"cores" integer NOT NULL,
	"memory_gib" integer NOT NULL,
	"arch" text NOT NULL,
	"requires_approval" boolean DEFAULT false NOT NULL,
	CONSTRAINT "machine_classes_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "machine_profiles" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"image_ref" text NOT NULL,
	"image_digest" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "machine_profiles_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "machines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"class_id" uuid NOT NULL,
	"profile_id" uuid NOT NULL,
	"location_id" uuid NOT NULL,
	"desired_power" text DEFAULT 'on' NOT NULL,
	"interfaces" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"phase" text NOT NULL,
	"phase_reason" text,
	"requires_approval" boolean DEFAULT false NOT NULL,
	"approved_by" uuid,
	"approved_at" timestamp with time zone,
	"deletion_requested_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"phase_changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_fleet_settings" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"approval_required" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provider_operations" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"machine_id" uuid,
	"capacity_id" uuid NOT NULL,
	"device_ref" text NOT NULL,
	"binding_id" uuid NOT NULL,
	"epoch" bigint NOT NULL,
	"fencing_token" bigint NOT NULL,
	"request" jsonb NOT NULL,
	"state" text DEFAULT 'Admitted' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_availability" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"location_id" uuid NOT NULL,
	"service" text NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"observed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "worker_heartbeats" ADD COLUMN "graphile_worker_ids" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "installations" ADD CONSTRAINT "installations_machine_id_machines_id_fk" FOREIGN KEY ("machine_id") REFERENCES "public"."machines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "installations" ADD CONSTRAINT "installations_allocation_id_machine_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."machine_allocations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_allocations" ADD CONSTRAINT "machine_allocations_machine_id_machines_id_fk" FOREIGN KEY ("machine_id") REFERENCES "public"."machines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_allocations" ADD CONSTRAINT "machine_allocations_capacity_id_machine_capacity_id_fk" FOREIGN KEY ("capacity_id") REFERENCES "public"."machine_capacity"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_capacity" ADD CONSTRAINT "machine_capacity_class_id_machine_classes_id_fk" FOREIGN KEY ("class_id") REFERENCES "public"."machine_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_capacity" ADD CONSTRAINT "machine_capacity_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_class_id_machine_classes_id_fk" FOREIGN KEY ("class_id") REFERENCES "public"."machine_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_profile_id_machine_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."machine_profiles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_approved_by_users_id_fk" FOREIGN KEY ("approved_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_fleet_settings" ADD CONSTRAINT "project_fleet_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_operations" ADD CONSTRAINT "provider_operations_machine_id_machines_id_fk" FOREIGN KEY ("machine_id") REFERENCES "public"."machines"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_operations" ADD CONSTRAINT "provider_operations_capacity_id_machine_capacity_id_fk" FOREIGN KEY ("capacity_id") REFERENCES "public"."machine_capacity"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "service_availability" ADD CONSTRAINT "service_availability_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "machine_allocations_live_capacity" ON "machine_allocations" USING btree ("capacity_id") WHERE "machine_allocations"."status" <> 'Released';--> statement-breakpoint
CREATE UNIQUE INDEX "machine_allocations_live_machine" ON "machine_allocations" USING btree ("machine_id") WHERE "machine_allocations"."status" <> 'Released';--> statement-breakpoint
CREATE INDEX "machine_capacity_pick" ON "machine_capacity" USING btree ("class_id","location_id","state");--> statement-breakpoint
CREATE UNIQUE INDEX "machines_project_name" ON "machines" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "machines_phase" ON "machines" USING btree ("phase","class_id","location_id","created_at");--> statement-breakpoint
CREATE INDEX "provider_operations_state" ON "provider_operations" USING btree ("state","updated_at");--> statement-breakpoint
CREATE INDEX "provider_operations_machine" ON "provider_operations" USING btree ("machine_id");--> statement-breakpoint
CREATE INDEX "service_availability_location" ON "service_availability" USING btree ("location_id","service");