DROP INDEX "pod_leases_cluster_node";--> statement-breakpoint
CREATE INDEX "ip_pools_network_roots" ON "ip_pools" USING btree ("network_id","family") WHERE parent_pool_id is null;--> statement-breakpoint
CREATE INDEX "pod_leases_node_cluster" ON "pod_leases" USING btree ("node","cluster_id");