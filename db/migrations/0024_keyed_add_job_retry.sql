-- Hand-written: drizzle cannot express functions.
--
-- A keyed graphile_worker.add_job is two statements: it retires a running job with the key, then
-- upserts the key's pending job, leaving it alone if it is locked. A worker that takes the pending
-- job between the two leaves the upsert nothing to update and, the key being taken, nothing to
-- insert: add_job returns a row with a null id and adds nothing (graphile/worker#580), and the
-- change that called it commits with no job to act on it, while the run that worker started may
-- have read the state from before the change. meridian_add_job adds again in that case; enqueueJob
-- (server/jobs/enqueue.ts) goes through it, and so, from here on, does the SQL that adds jobs itself
-- (the trigger that wakes a project's deletion, 0014, and the block returns that CNI DELs and carves
-- schedule, 0021 and 0022): see the end of this file.

-- graphile_worker.add_job (same parameters and defaults) for a job key a worker may take meanwhile:
-- when a keyed add returns no job, the key's job was taken and is running, so adding again retires
-- it and queues the successor that runs after it. Up to 3 tries (each lost one needs yet another
-- job with the key added and taken meanwhile), then raises 'MJ001'. Returns the job's id.
-- (Returns bigint rather than graphile-worker's row type: db/migrate.ts installs graphile-worker's
-- schema after these migrations, and PL/pgSQL bodies are resolved only when they run.)
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
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- The functions that called graphile_worker.add_job themselves, re-created from their current
-- definitions (pg_get_functiondef, which keeps their settings such as plan_cache_mode) with those
-- calls, and nothing else, going through meridian_add_job instead (same named parameters).
DO $$
DECLARE
  v_fn regprocedure;
  v_def text;
BEGIN
  FOREACH v_fn IN ARRAY ARRAY['project_deletion_wake_on_release()', 'cni_lease_release(jsonb)', 'cni_node_block_ensure(jsonb)']::regprocedure[] LOOP
    v_def := pg_get_functiondef(v_fn);
    IF position('graphile_worker.add_job(' IN v_def) = 0 THEN
      RAISE EXCEPTION '% no longer calls graphile_worker.add_job', v_fn;
    END IF;
    EXECUTE replace(v_def, 'graphile_worker.add_job(', 'meridian_add_job(');
  END LOOP;
END
$$;
