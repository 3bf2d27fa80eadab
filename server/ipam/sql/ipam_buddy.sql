-- The other half of block `b`'s parent (its buddy: server/ipam/blocks.ts). One expression, and not
-- STRICT (it is never called with NULL), so PostgreSQL inlines it into its callers instead of
-- running the SQL-function executor for every call.
CREATE OR REPLACE FUNCTION ipam_buddy(b cidr) RETURNS cidr
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) = b
              THEN cidr(set_masklen(broadcast(set_masklen(b, masklen(b) - 1)), masklen(b)))
              ELSE set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) END
$$;
