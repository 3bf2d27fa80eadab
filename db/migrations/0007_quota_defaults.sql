-- Hand-written: seed data, which drizzle-kit cannot generate. Quota's defaults must exist before any
-- project is created (the demo seed, the CLI, tests), so they ship as a migration, not a seed step.
-- The policies' expressions are known to compile (server/quota/quota.test.ts recompiles them), so
-- they are stored Ready.
INSERT INTO resource_registrations (resource_type, consumer_kind, type, description, base_unit, display_unit, unit_conversion_factor, claiming_kinds, created_by)
VALUES
  ('ipam.miloapis.com/ipclaims', 'Project', 'Entity', 'IP claims (address blocks) a project holds at once', 'claims', 'claims', 1, '{IPClaim}', 'migration'),
  ('metal.datumapis.com/machines', 'Project', 'Entity', 'Bare-metal machines a project holds at once', 'machines', 'machines', 1, '{Machine}', 'migration')
ON CONFLICT (resource_type) DO NOTHING;
--> statement-breakpoint
INSERT INTO grant_creation_policies (name, description, trigger_kind, constraints, grant_name_template, allowances, enabled, ready, ready_reason, ready_message, created_by)
VALUES (
  'default-project-quota',
  'Every new project gets 100 IP claims and 10 machines',
  'Project',
  '[]'::jsonb,
  'default-{{trigger.metadata.name}}',
  '[{"resourceType":"ipam.miloapis.com/ipclaims","amount":100},{"resourceType":"metal.datumapis.com/machines","amount":10}]'::jsonb,
  true, true, 'Compiled', 'all expressions compiled', 'migration'
)
ON CONFLICT (name) DO NOTHING;
--> statement-breakpoint
INSERT INTO claim_creation_policies (name, description, trigger_kind, constraints, claim_name_template, requests, enabled, ready, ready_reason, ready_message, created_by)
VALUES
  ('ipclaims', 'Each IP claim holds one unit of ipam.miloapis.com/ipclaims', 'IPClaim', '[]'::jsonb, 'ipclaim-{{requestInfo.name}}',
   '[{"resourceType":"ipam.miloapis.com/ipclaims","amount":1}]'::jsonb, true, true, 'Compiled', 'all expressions compiled', 'migration'),
  ('machines', 'Each machine holds one unit of metal.datumapis.com/machines', 'Machine', '[]'::jsonb, 'machine-{{trigger.metadata.name}}',
   '[{"resourceType":"metal.datumapis.com/machines","amount":1}]'::jsonb, true, true, 'Compiled', 'all expressions compiled', 'migration')
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Projects that exist already get what the default policy would have given them at creation (its
-- template rendered here: default-<slug>). Policies added later apply to projects created after them.
INSERT INTO resource_grants (project_id, name, allowances, source, source_ref, created_by)
SELECT id, 'default-' || slug,
  '[{"resourceType":"ipam.miloapis.com/ipclaims","amount":100},{"resourceType":"metal.datumapis.com/machines","amount":10}]'::jsonb,
  'Migration', 'default-project-quota', 'migration'
FROM projects
ON CONFLICT (project_id, name) DO NOTHING;
--> statement-breakpoint
-- IP claims that exist already hold their unit of quota from now on (a project above 100 shows over
-- its limit; nothing is revoked).
INSERT INTO resource_claims (project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, ref_uid, policy_name, created_by, created_at)
SELECT project_id, 'ipclaim-' || name,
  '[{"resourceType":"ipam.miloapis.com/ipclaims","amount":1}]'::jsonb,
  'Granted', 'QuotaAvailable', 'granted when quota was introduced (the IP claim existed before)',
  '[{"resourceType":"ipam.miloapis.com/ipclaims","amount":1,"status":"Granted","reason":"QuotaAvailable","message":"granted when quota was introduced"}]'::jsonb,
  'IPClaim', name, id::text, 'ipclaims', 'migration', created_at
FROM ip_claims;
--> statement-breakpoint
-- The buckets, from the books just written.
WITH lim AS (
  SELECT g.project_id, a->>'resourceType' AS resource_type, sum((a->>'amount')::bigint) AS total, count(*)::int AS grants
  FROM resource_grants g CROSS JOIN jsonb_array_elements(g.allowances) a WHERE g.active GROUP BY 1, 2
), alloc AS (
  SELECT c.project_id, r->>'resourceType' AS resource_type, sum((r->>'amount')::bigint) AS total, count(*)::int AS claims
  FROM resource_claims c CROSS JOIN jsonb_array_elements(c.requests) r WHERE c.status = 'Granted' AND c.released_at IS NULL GROUP BY 1, 2
), keys AS (
  SELECT project_id, resource_type FROM lim UNION SELECT project_id, resource_type FROM alloc
)
INSERT INTO allowance_buckets (project_id, resource_type, "limit", grant_count, allocated, claim_count)
SELECT k.project_id, k.resource_type, coalesce(l.total, 0), coalesce(l.grants, 0), coalesce(a.total, 0), coalesce(a.claims, 0)
FROM keys k
LEFT JOIN lim l ON l.project_id = k.project_id AND l.resource_type = k.resource_type
LEFT JOIN alloc a ON a.project_id = k.project_id AND a.resource_type = k.resource_type
ON CONFLICT (project_id, resource_type) DO NOTHING;
