-- A child pool is carved for a purpose: claims and pod blocks that name no pool come from the
-- network's root pools, and from a child pool only when it is marked as the network's default
-- (`is_default`). Existing child pools are not defaults: the claims that name them still land there.
ALTER TABLE "ip_pools" ADD COLUMN "is_default" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- A machine's timeline is built from events: each provider operation outcome and each wait with
-- its reason is recorded by a trigger (its function: server/fleet/sql/).
CREATE TRIGGER provider_operation_history AFTER INSERT OR UPDATE ON provider_operations FOR EACH ROW EXECUTE FUNCTION provider_operation_history();--> statement-breakpoint
CREATE TRIGGER machine_wait_history AFTER UPDATE OF phase_reason ON machines FOR EACH ROW EXECUTE FUNCTION machine_wait_history();
