-- Hand-written: drizzle cannot express triggers. A capacity's device reference identifies the
-- physical machine at the provider and never changes, and a binding's identity never changes once
-- created, whatever the application does. The triggers' functions are source code:
-- server/fleet/sql/machine_capacity_device_ref_immutable.sql and machine_allocations_immutable.sql.
CREATE TRIGGER machine_capacity_immutable BEFORE UPDATE ON machine_capacity
  FOR EACH ROW EXECUTE FUNCTION machine_capacity_device_ref_immutable();
--> statement-breakpoint
CREATE TRIGGER machine_allocations_immutable BEFORE UPDATE ON machine_allocations
  FOR EACH ROW EXECUTE FUNCTION machine_allocations_immutable();
