-- Hand-written: drizzle cannot express triggers. A capacity's device reference identifies the
-- physical machine at the provider; it never changes, whatever the application does.
CREATE OR REPLACE FUNCTION machine_capacity_device_ref_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.device_ref <> OLD.device_ref THEN
    RAISE EXCEPTION 'machine_capacity.device_ref is immutable (% → % refused)', OLD.device_ref, NEW.device_ref
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.asset_epoch < OLD.asset_epoch THEN
    RAISE EXCEPTION 'machine_capacity.asset_epoch only grows (% → % refused)', OLD.asset_epoch, NEW.asset_epoch
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER machine_capacity_immutable BEFORE UPDATE ON machine_capacity
  FOR EACH ROW EXECUTE FUNCTION machine_capacity_device_ref_immutable();
--> statement-breakpoint
-- A binding's identity never changes once created (status may move forward only).
CREATE OR REPLACE FUNCTION machine_allocations_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.machine_id <> OLD.machine_id OR NEW.capacity_id <> OLD.capacity_id OR NEW.epoch <> OLD.epoch THEN
    RAISE EXCEPTION 'machine_allocations spec is immutable' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF OLD.status = 'Released' AND NEW.status <> 'Released' THEN
    RAISE EXCEPTION 'a Released allocation is terminal' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER machine_allocations_immutable BEFORE UPDATE ON machine_allocations
  FOR EACH ROW EXECUTE FUNCTION machine_allocations_immutable();
