CREATE TABLE "metric_counters" (
	"metric" text NOT NULL,
	"labels" text NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "metric_counters_metric_labels_pk" PRIMARY KEY("metric","labels")
);
