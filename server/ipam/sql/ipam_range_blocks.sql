-- The aligned blocks that make up the address range [lo, hi] (both inclusive), lowest first: the
-- canonical free set of a range, as rangeToCidrs in server/ipam/blocks.ts (server/ipam/allocator.test.ts
-- checks that they agree).
CREATE OR REPLACE FUNCTION ipam_range_blocks(lo inet, hi inet) RETURNS SETOF cidr
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_bits int := CASE family(lo) WHEN 4 THEN 32 ELSE 128 END;
  v_len int;
  v_block cidr;
BEGIN
  lo := set_masklen(lo, v_bits);
  hi := set_masklen(hi, v_bits);
  WHILE lo <= hi LOOP
    -- The largest block that starts at lo and ends at or before hi.
    v_len := v_bits;
    WHILE v_len > 0 AND set_masklen(network(set_masklen(lo, v_len - 1)), v_bits) = lo
      AND set_masklen(broadcast(set_masklen(lo, v_len - 1)), v_bits) <= hi LOOP
      v_len := v_len - 1;
    END LOOP;
    v_block := network(set_masklen(lo, v_len));
    RETURN NEXT v_block;
    EXIT WHEN set_masklen(broadcast(v_block), v_bits) >= hi;
    lo := set_masklen(broadcast(v_block), v_bits) + 1;
  END LOOP;
END
$$;
