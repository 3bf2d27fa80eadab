-- Capacity alerts (server/capacity/alerts.ts) and signed webhooks delivered from a durable outbox
-- (server/capacity/webhooks.ts). Hand-written, as 0032.
--
-- A rule sets thresholds for a project's series (object_id null: all of them) or one object's
-- (a pool, network, cluster, or the project itself for its buckets); absent rules mean the
-- defaults: warning at 80 %, critical at 95 %, full within 7 days, 5 points of hysteresis.
CREATE TABLE "capacity_alert_rules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL REFERENCES "projects"("id") ON DELETE cascade,
	"object_id" uuid,
	"warning_percent" numeric(5, 2) DEFAULT 80 NOT NULL,
	"critical_percent" numeric(5, 2) DEFAULT 95 NOT NULL,
	"forecast_days" integer DEFAULT 7 NOT NULL,
	"hysteresis_percent" numeric(5, 2) DEFAULT 5 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "capacity_alert_rules_sane" CHECK (warning_percent > 0 AND warning_percent <= critical_percent AND critical_percent <= 100
	                                                AND hysteresis_percent >= 0 AND hysteresis_percent < warning_percent AND forecast_days >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "capacity_alert_rules_scope" ON "capacity_alert_rules" ("project_id", coalesce("object_id", '00000000-0000-0000-0000-000000000000'::uuid));
--> statement-breakpoint
-- The state of each condition of each series: `warning`, `critical` or `forecast`; one row per
-- (series, condition) once it first fired. Transitions are audit events and webhook deliveries.
CREATE TABLE "capacity_alerts" (
	"series_id" integer NOT NULL REFERENCES "capacity_series"("id") ON DELETE cascade,
	"condition" text NOT NULL,
	"project_id" uuid NOT NULL REFERENCES "projects"("id") ON DELETE cascade,
	"firing" boolean NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"value" double precision NOT NULL,
	"threshold" double precision NOT NULL,
	"message" text NOT NULL,
	"transitions" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "capacity_alerts_pk" PRIMARY KEY ("series_id", "condition")
);
--> statement-breakpoint
CREATE INDEX "capacity_alerts_project" ON "capacity_alerts" ("project_id", "firing");
--> statement-breakpoint
-- A webhook endpoint of a project, or of the operators (project_id null: every project's alerts).
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid REFERENCES "projects"("id") ON DELETE cascade,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_endpoints_scope_name" ON "webhook_endpoints" (coalesce("project_id", '00000000-0000-0000-0000-000000000000'::uuid), "name");
--> statement-breakpoint
-- The outbox and delivery log: one row per (endpoint, alert transition), written in the transaction
-- of the transition. `event_id` is the idempotency key a receiver sees on every attempt.
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"endpoint_id" uuid NOT NULL REFERENCES "webhook_endpoints"("id") ON DELETE cascade,
	"event_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'Pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event" ON "webhook_deliveries" ("endpoint_id", "event_id");
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending" ON "webhook_deliveries" ("endpoint_id", "id") WHERE "state" = 'Pending';
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_log" ON "webhook_deliveries" ("endpoint_id", "created_at");
