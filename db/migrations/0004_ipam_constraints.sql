-- Hand-written: drizzle cannot express exclusion constraints. These make overlapping addresses
-- impossible whatever the application does; the allocator's checks only give friendlier errors.
CREATE EXTENSION IF NOT EXISTS btree_gist;
--> statement-breakpoint
-- No two live allocations of one pool overlap (claims, reservations, child pools, pod addresses).
ALTER TABLE ip_allocations ADD CONSTRAINT ip_allocations_no_overlap
  EXCLUDE USING gist (pool_id WITH =, cidr inet_ops WITH &&);
--> statement-breakpoint
-- No two root pools of one project overlap (their networks' address spaces are disjoint).
ALTER TABLE ip_pools ADD CONSTRAINT ip_pools_roots_no_overlap
  EXCLUDE USING gist (project_id WITH =, cidr inet_ops WITH &&) WHERE (parent_pool_id IS NULL);
--> statement-breakpoint
ALTER TABLE ip_pools ADD CONSTRAINT ip_pools_parent_fk FOREIGN KEY (parent_pool_id) REFERENCES ip_pools(id) ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE ip_pools ADD CONSTRAINT ip_pools_counters_sane CHECK (allocated >= 0 AND allocated <= capacity);
--> statement-breakpoint
ALTER TABLE ip_pools ADD CONSTRAINT ip_pools_family CHECK (family IN (4, 6));
--> statement-breakpoint
ALTER TABLE ip_free_blocks ADD CONSTRAINT ip_free_blocks_no_overlap
  EXCLUDE USING gist (pool_id WITH =, cidr inet_ops WITH &&);
