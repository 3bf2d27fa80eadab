CREATE TABLE "clusters" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"network_id" uuid NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"node_block_prefix_v4" smallint DEFAULT 26 NOT NULL,
	"node_block_prefix_v6" smallint DEFAULT 120 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "node_blocks" (
	"pool_id" uuid PRIMARY KEY NOT NULL,
	"cluster_id" uuid NOT NULL,
	"node" text NOT NULL,
	"family" smallint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pod_leases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"cluster_id" uuid NOT NULL,
	"cni_network" text NOT NULL,
	"container_id" text NOT NULL,
	"ifname" text NOT NULL,
	"family" smallint NOT NULL,
	"pool_id" uuid NOT NULL,
	"allocation_id" uuid NOT NULL,
	"address" "cidr" NOT NULL,
	"pod_namespace" text,
	"pod_name" text,
	"node" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"checked_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_network_id_networks_id_fk" FOREIGN KEY ("network_id") REFERENCES "public"."networks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_blocks" ADD CONSTRAINT "node_blocks_pool_id_ip_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."ip_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "node_blocks" ADD CONSTRAINT "node_blocks_cluster_id_clusters_id_fk" FOREIGN KEY ("cluster_id") REFERENCES "public"."clusters"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pod_leases" ADD CONSTRAINT "pod_leases_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pod_leases" ADD CONSTRAINT "pod_leases_cluster_id_clusters_id_fk" FOREIGN KEY ("cluster_id") REFERENCES "public"."clusters"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pod_leases" ADD CONSTRAINT "pod_leases_pool_id_ip_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."ip_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pod_leases" ADD CONSTRAINT "pod_leases_allocation_id_ip_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."ip_allocations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "clusters_project_name" ON "clusters" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "clusters_network" ON "clusters" USING btree ("network_id");--> statement-breakpoint
CREATE INDEX "node_blocks_cluster_node" ON "node_blocks" USING btree ("cluster_id","node","family");--> statement-breakpoint
CREATE UNIQUE INDEX "pod_leases_attachment" ON "pod_leases" USING btree ("cluster_id","cni_network","container_id","ifname","family");--> statement-breakpoint
CREATE INDEX "pod_leases_project" ON "pod_leases" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "pod_leases_cluster_node" ON "pod_leases" USING btree ("cluster_id","node");