-- A child pool is carved for a purpose: claims and pod blocks that name no pool come from the
-- network's root pools, and from a child pool only when it is marked as the network's default
-- (`is_default`). Existing child pools are not defaults: the claims that name them still land there.
ALTER TABLE "ip_pools" ADD COLUMN "is_default" boolean DEFAULT false NOT NULL;
