-- What stays free of free block `f` when block `t` (inside it) is taken: the buddies on the path
-- from f down to t (server/ipam/blocks.ts splitBlock). Inlined like ipam_buddy (not STRICT, never
-- called with NULL): run through the SQL-function executor it cost 0.2 ms per allocation.
CREATE OR REPLACE FUNCTION ipam_split(f cidr, t cidr) RETURNS SETOF cidr
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT ipam_buddy(set_masklen(t, l)) FROM generate_series(masklen(f) + 1, masklen(t)) AS l
$$;
