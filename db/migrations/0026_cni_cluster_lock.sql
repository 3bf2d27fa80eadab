-- Hand-written: drizzle cannot express functions.
--
-- A cluster's deletion and its CNI ADDs and block carves serialize on the cluster's row. Deleting
-- a cluster (server/cni/clusters.ts deleteCluster) locks its row FOR UPDATE and, in that one
-- transaction, revokes its tokens, releases every lease, returns every node block and deletes the
-- row. Every ADD and every carve first locks its cluster's row FOR KEY SHARE (which the ADD's own
-- foreign keys take anyway, only later): an ADD or carve in flight finishes before the deletion
-- starts, and its lease or block is then released by it; one that comes after finds no cluster and
-- changes nothing. So once a deletion has committed, nothing of the cluster is left, and no ADD
-- fails on a foreign key half-way.
--
-- An ADD whose cluster is gone answers {"clusterGone": true} ({"tokenRevoked": true} takes
-- precedence: a cluster token is revoked with its cluster); a carve answers the same. Like
-- cni_lease_add and cni_lease_add_many under the _confirmed wrappers (0025), cni_node_block_ensure
-- is now called only under its wrapper here, which takes the lock.
CREATE OR REPLACE FUNCTION cni_lease_add_confirmed(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_cluster_live boolean;
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  v_cluster_live := FOUND;
  -- After the lock: a token revoked by a deletion that committed meanwhile is seen revoked here.
  IF p ? 'token' AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = (p->>'token')::uuid AND t.revoked_at IS NULL) THEN
    RETURN '{"tokenRevoked": true}'::jsonb;
  END IF;
  IF NOT v_cluster_live THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_lease_add(p);
END
$$;
--> statement-breakpoint
-- The batch: its clusters locked in one order (so batches never deadlock on them), then each ADD
-- refused whose token is revoked or whose cluster is gone; the others go to cni_lease_add_many, and
-- the answers come back in the order given.
CREATE OR REPLACE FUNCTION cni_lease_add_many_confirmed(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_clusters uuid[];
  v_answer jsonb[];
  v_answers jsonb;
  v_out jsonb := '[]'::jsonb;
  v_next int := 0;
BEGIN
  SELECT array_agg(c.id) INTO v_clusters FROM (
    SELECT id FROM clusters
    WHERE id IN (SELECT (x->>'cluster')::uuid FROM jsonb_array_elements(p_items) AS x)
    ORDER BY id
    FOR KEY SHARE) c;
  -- After the locks: a token revoked by a deletion that committed meanwhile is seen revoked here.
  SELECT array_agg(CASE WHEN x.v ? 'token' AND t.id IS NULL THEN '{"tokenRevoked": true}'::jsonb
                        WHEN NOT (x.v->>'cluster')::uuid = ANY (coalesce(v_clusters, '{}')) THEN '{"clusterGone": true}'::jsonb
                   END ORDER BY x.i) INTO v_answer
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  LEFT JOIN api_tokens t ON t.id = (x.v->>'token')::uuid AND t.revoked_at IS NULL;
  IF NOT EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NOT NULL) THEN
    RETURN cni_lease_add_many(p_items);
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NULL) THEN
    v_answers := cni_lease_add_many((SELECT jsonb_agg(x.v ORDER BY x.i) FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
                                     WHERE v_answer[x.i::int] IS NULL));
  END IF;
  FOR k IN 1 .. array_length(v_answer, 1) LOOP
    IF v_answer[k] IS NULL THEN
      v_out := v_out || jsonb_build_array(v_answers->v_next);
      v_next := v_next + 1;
    ELSE
      v_out := v_out || jsonb_build_array(v_answer[k]);
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;
--> statement-breakpoint
-- A block carve (cni_node_block_ensure, 0022) with the cluster's row locked first: the carve for a
-- deleted cluster carves nothing and answers {"clusterGone": true}. server/cni/leases.ts carves
-- only through this.
CREATE OR REPLACE FUNCTION cni_node_block_ensure_locked(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_node_block_ensure(p);
END
$$;
