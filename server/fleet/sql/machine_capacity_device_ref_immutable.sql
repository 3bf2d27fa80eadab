-- A capacity's device reference identifies the physical machine at the provider: it never changes,
-- whatever the application does, and its asset epoch only grows. Run by the trigger
-- machine_capacity_immutable (BEFORE UPDATE on machine_capacity, db/migrations/0009_fleet_constraints.sql).
CREATE OR REPLACE FUNCTION machine_capacity_device_ref_immutable() RETURNS trigger
LANGUAGE plpgsql
AS $$
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
