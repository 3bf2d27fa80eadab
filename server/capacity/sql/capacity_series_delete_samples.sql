-- A series' samples go with it (a trigger, not a foreign key: a foreign key's check on each of
-- the 10,000 sample rows a sample statement inserts would cost more than the insert itself; the
-- sampler only ever writes samples of series it has just read or created).
CREATE OR REPLACE FUNCTION capacity_series_delete_samples() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  DELETE FROM capacity_samples WHERE series_id = OLD.id;
  RETURN OLD;
END;
$$;
