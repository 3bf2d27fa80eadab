-- A binding's identity (machine, capacity, epoch) never changes once created, and Released is
-- terminal. Run by the trigger machine_allocations_immutable (BEFORE UPDATE on machine_allocations,
-- db/migrations/0009_fleet_constraints.sql).
CREATE OR REPLACE FUNCTION machine_allocations_immutable() RETURNS trigger
LANGUAGE plpgsql
AS $$
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
