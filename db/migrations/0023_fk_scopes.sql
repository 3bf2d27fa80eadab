-- Fewer foreign-key checks on the rows a CNI ADD inserts (one allocation and one lease per pod
-- address): an allocation's pool, project and network are one key of its pool, and a lease's
-- cluster and project one key of its cluster. The lease's pool is its allocation's pool; deleting
-- the pool deletes the allocation and so the lease. Pod addresses have no claim, so the claim index
-- covers claimed rows only.
CREATE UNIQUE INDEX "ip_pools_id_scope" ON "ip_pools" USING btree ("id","project_id","network_id");--> statement-breakpoint
CREATE UNIQUE INDEX "clusters_id_project" ON "clusters" USING btree ("id","project_id");--> statement-breakpoint
ALTER TABLE "ip_allocations" DROP CONSTRAINT "ip_allocations_pool_id_ip_pools_id_fk";--> statement-breakpoint
ALTER TABLE "ip_allocations" DROP CONSTRAINT "ip_allocations_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "ip_allocations" DROP CONSTRAINT "ip_allocations_network_id_networks_id_fk";--> statement-breakpoint
ALTER TABLE "ip_allocations" ADD CONSTRAINT "ip_allocations_pool_scope_fk" FOREIGN KEY ("pool_id","project_id","network_id") REFERENCES "public"."ip_pools"("id","project_id","network_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pod_leases" DROP CONSTRAINT "pod_leases_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "pod_leases" DROP CONSTRAINT "pod_leases_cluster_id_clusters_id_fk";--> statement-breakpoint
ALTER TABLE "pod_leases" DROP CONSTRAINT "pod_leases_pool_id_ip_pools_id_fk";--> statement-breakpoint
ALTER TABLE "pod_leases" ADD CONSTRAINT "pod_leases_cluster_scope_fk" FOREIGN KEY ("cluster_id","project_id") REFERENCES "public"."clusters"("id","project_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
DROP INDEX "ip_allocations_claim";--> statement-breakpoint
CREATE INDEX "ip_allocations_claim" ON "ip_allocations" USING btree ("claim_id") WHERE "ip_allocations"."claim_id" is not null;
