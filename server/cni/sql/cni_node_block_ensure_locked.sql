-- A block carve (cni_node_block_ensure) with the cluster's row locked first (FOR KEY SHARE, as an
-- ADD takes it: see cni_lease_add_confirmed): the carve for a deleted cluster, or one being deleted, carves nothing and
-- answers {"clusterGone": true}. server/cni/leases.ts carves only through this.
CREATE OR REPLACE FUNCTION cni_node_block_ensure_locked(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  -- Read after the lock (a deletion marks the row under FOR UPDATE): a cluster being deleted gets no block.
  IF NOT FOUND OR EXISTS (SELECT 1 FROM clusters WHERE id = (p->>'cluster')::uuid AND deletion_timestamp IS NOT NULL) THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_node_block_ensure(p);
END
$$;
