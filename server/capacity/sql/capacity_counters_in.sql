-- capacity_counters() (capacity_counters.sql, which says what each series is) for the networks whose
-- id is between lo and hi (both included), with the buckets only when `buckets`: the paced sampler (server/capacity/
-- history.ts recordSample) records a sample part by part, each part one range of network ids, so a
-- network's pools, its per-family totals and its clusters are always sampled together. The bounds
-- are plain range conditions (no NULL for "no end": the whole range is 00000000-… to ffffffff-…),
-- so each part reads its own index range of pools and clusters.
CREATE OR REPLACE FUNCTION capacity_counters_in(p_lo uuid, p_hi uuid, p_buckets boolean)
RETURNS TABLE (key text, kind text, project_id uuid, object_id uuid, network_id uuid, family smallint, resource_type text,
               used numeric, capacity numeric, reserved numeric)
LANGUAGE sql STABLE
AS $$
  SELECT 'pool:' || p.id, 'pool', p.project_id, p.id, p.network_id, p.family, NULL::text,
         p.allocated, p.capacity, p.reserve_leading + p.reserve_trailing
    FROM ip_pools p WHERE p.kind <> 'NodeBlock' AND p.network_id BETWEEN p_lo AND p_hi
  UNION ALL
  SELECT 'network:' || p.network_id || ':' || p.family, 'network', p.project_id, p.network_id, p.network_id, p.family, NULL,
         sum(p.allocated), sum(p.capacity), sum(p.reserve_leading + p.reserve_trailing)
    FROM ip_pools p WHERE p.parent_pool_id IS NULL AND p.network_id BETWEEN p_lo AND p_hi GROUP BY p.project_id, p.network_id, p.family
  UNION ALL
  SELECT 'cluster-pods:' || c.id || ':' || r.family, 'cluster-pods', c.project_id, c.id, c.network_id, r.family, NULL,
         coalesce(b.allocated, 0), coalesce(b.size, 0), 0
    FROM clusters c
    JOIN (SELECT p.network_id, p.family, sum(p.capacity) AS capacity FROM ip_pools p
           WHERE p.parent_pool_id IS NULL AND p.network_id BETWEEN p_lo AND p_hi GROUP BY 1, 2) r
      ON r.network_id = c.network_id
    LEFT JOIN (SELECT nb.cluster_id, nb.family, sum(p.allocated) AS allocated, sum(p.capacity + p.reserve_leading + p.reserve_trailing) AS size
                 FROM node_blocks nb JOIN ip_pools p ON p.id = nb.pool_id WHERE p.network_id BETWEEN p_lo AND p_hi GROUP BY 1, 2) b
      ON b.cluster_id = c.id AND b.family = r.family
   WHERE c.network_id BETWEEN p_lo AND p_hi
  UNION ALL
  SELECT 'cluster-blocks:' || c.id || ':' || r.family, 'cluster-blocks', c.project_id, c.id, c.network_id, r.family, NULL,
         coalesce(b.size, 0), r.capacity, 0
    FROM clusters c
    JOIN (SELECT p.network_id, p.family, sum(p.capacity) AS capacity FROM ip_pools p
           WHERE p.parent_pool_id IS NULL AND p.network_id BETWEEN p_lo AND p_hi GROUP BY 1, 2) r
      ON r.network_id = c.network_id
    LEFT JOIN (SELECT nb.cluster_id, nb.family, sum(p.capacity + p.reserve_leading + p.reserve_trailing) AS size
                 FROM node_blocks nb JOIN ip_pools p ON p.id = nb.pool_id WHERE p.network_id BETWEEN p_lo AND p_hi GROUP BY 1, 2) b
      ON b.cluster_id = c.id AND b.family = r.family
   WHERE c.network_id BETWEEN p_lo AND p_hi
  UNION ALL
  SELECT 'bucket:' || ab.project_id || ':' || ab.resource_type, 'bucket', ab.project_id, ab.project_id, NULL, NULL, ab.resource_type,
         ab.allocated::numeric, ab."limit"::numeric, 0
    FROM allowance_buckets ab WHERE p_buckets
$$;
