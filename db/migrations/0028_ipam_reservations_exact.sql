-- Hand-written: drizzle cannot express the CHECK below.
--
-- Reservations are counts of addresses, as exact as the pool counters: an IPv6 pool may reserve a
-- /64 or more (2^64 does not fit an integer column). numeric(40,0) holds any count up to 2^128.
ALTER TABLE ip_pools ALTER COLUMN reserve_leading DROP DEFAULT;--> statement-breakpoint
ALTER TABLE ip_pools ALTER COLUMN reserve_trailing DROP DEFAULT;--> statement-breakpoint
ALTER TABLE ip_pools ALTER COLUMN reserve_leading TYPE numeric(40, 0);--> statement-breakpoint
ALTER TABLE ip_pools ALTER COLUMN reserve_trailing TYPE numeric(40, 0);--> statement-breakpoint
ALTER TABLE ip_pools ALTER COLUMN reserve_leading SET DEFAULT '0';--> statement-breakpoint
ALTER TABLE ip_pools ALTER COLUMN reserve_trailing SET DEFAULT '0';--> statement-breakpoint
-- The reserved space is derived, never stored twice: a pool's addresses are exactly its allocatable
-- capacity plus its two reservations, so "capacity = allocated + reserved + free" (the API's
-- figures) cannot drift whatever writes a pool row (the CNI's node blocks are written in SQL).
ALTER TABLE ip_pools ADD CONSTRAINT ip_pools_reservations_fit CHECK (
  reserve_leading >= 0 AND reserve_trailing >= 0
  AND capacity + reserve_leading + reserve_trailing = trunc(power(2::numeric, (CASE family WHEN 4 THEN 32 ELSE 128 END) - masklen(cidr)))
);
