-- Every utilization series as the exact counters say it is now: the one place that knows where the
-- counters live (pools' capacity/allocated, node blocks, allowance buckets), read by the sampler
-- (capacity_sample), /metrics and the alert evaluation. Never scans allocations: one row per pool,
-- per node block and per bucket is read.
--
--   kind            object        used                                  capacity
--   pool            a pool        addresses allocated in it             its allocatable addresses
--   network         network, fam  sum over its root pools               sum over its root pools
--   cluster-pods    cluster, fam  pod addresses in its node blocks      addresses of its node blocks
--   cluster-blocks  cluster, fam  addresses of its node blocks          the network's allocatable addresses
--   bucket          project, type allocated                             limit
--
-- `reserved` is the pools' leading and trailing reservations (0 for the others): capacity +
-- reserved is every address of the CIDRs.
--
-- The counters of a range of networks are capacity_counters_in's (capacity_counters_in.sql); this is
-- the whole range, with the buckets.
CREATE OR REPLACE FUNCTION capacity_counters()
RETURNS TABLE (key text, kind text, project_id uuid, object_id uuid, network_id uuid, family smallint, resource_type text,
               used numeric, capacity numeric, reserved numeric)
LANGUAGE sql STABLE
AS $$
  SELECT * FROM capacity_counters_in('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', true)
$$;
