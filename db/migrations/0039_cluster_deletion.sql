-- A cluster's deletion in steps (server/cni/clusters.ts deleteCluster): the time it was asked for
-- (its deletionTimestamp; ADDs and block carves for it are refused from then on) while the worker
-- returns its blocks in bounded batches. Pod leases get an index on their allocation: deleting an
-- allocation (every DEL, every block a deletion returns) cascades to its lease, and without an
-- index each cascade reads the whole pod_leases table.
ALTER TABLE "clusters" ADD COLUMN "deletion_timestamp" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "pod_leases_allocation" ON "pod_leases" USING btree ("allocation_id");
