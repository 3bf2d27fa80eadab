-- Hand-written: the write-path functions keep one plan per statement. A PL/pgSQL statement with
-- parameters is planned afresh for its first five runs and then kept on a generic plan only if
-- that looks no dearer than a custom one; for these statements (parameters taken from jsonb) it
-- never did, and PostgreSQL re-planned every statement of every call: a third of the CPU of a CNI
-- ADD (perf, bench/cni-add). Their plans do not depend on the values (each is a key look-up or a
-- per-pool index scan), so they are planned once per session.
ALTER FUNCTION ipam_allocate(uuid, int, cidr, text, uuid, uuid) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION ipam_release(uuid, uuid) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION quota_admit(uuid, text, jsonb, text, text, text, text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION ipam_claim_try(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION ipam_claim_create(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION ipam_claim_create_many(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION cni_lease_add(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION cni_lease_add_many(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION cni_lease_release(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION project_refuse_new_objects() SET plan_cache_mode = force_generic_plan;
