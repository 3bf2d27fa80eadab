-- graphile_worker.add_job (same parameters and defaults) for a job key a worker may take meanwhile.
--
-- A keyed add_job is two statements: it retires a running job with the key, then upserts the key's
-- pending job, leaving it alone if it is locked. A worker that takes the pending job between the two
-- leaves the upsert nothing to update and, the key being taken, nothing to insert: add_job returns a
-- row with a null id and adds nothing (graphile/worker#580), and the change that called it commits
-- with no job to act on it, while the run that worker started may have read the state from before
-- the change. So when a keyed add returns no job, the key's job was taken and is running, and adding
-- again retires it and queues the successor that runs after it. Up to 3 tries (each lost one needs
-- yet another job with the key added and taken meanwhile), then raises 'MJ001'. Returns the job's id.
--
-- Every job Meridian adds goes through this: enqueueJob (server/jobs/enqueue.ts) and the SQL that
-- adds jobs itself (project_deletion_wake_on_release, cni_lease_release, cni_node_block_ensure).
-- It returns bigint rather than graphile-worker's row type: graphile-worker installs its schema
-- after Meridian's migrations and function files (db/migrate.ts), and a PL/pgSQL body is resolved
-- only when it runs.
CREATE OR REPLACE FUNCTION meridian_add_job(
  identifier text,
  payload json DEFAULT NULL,
  queue_name text DEFAULT NULL,
  run_at timestamptz DEFAULT NULL,
  max_attempts int DEFAULT NULL,
  job_key text DEFAULT NULL,
  priority int DEFAULT NULL,
  flags text[] DEFAULT NULL,
  job_key_mode text DEFAULT 'replace'
) RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
  v_id bigint;
BEGIN
  FOR v_try IN 1 .. 3 LOOP
    SELECT j.id INTO v_id
    FROM graphile_worker.add_job(identifier, payload, queue_name => queue_name, run_at => run_at, max_attempts => max_attempts,
                                 job_key => job_key, priority => priority, flags => flags, job_key_mode => job_key_mode) AS j;
    IF v_id IS NOT NULL OR job_key IS NULL THEN
      RETURN v_id;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'could not add job % with key %: its pending job was taken by a worker during each of 3 tries', identifier, job_key
    USING ERRCODE = 'MJ001';
END
$$;
