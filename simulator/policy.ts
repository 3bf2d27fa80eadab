/**
 * Target-level authorization of the runtime API: which workload (SPIFFE ID) may run which operation
 * kinds on which assets. The policy is a JSON file (SIMULATOR_POLICY_FILE), re-read when it changes;
 * a file that does not parse keeps the previous policy in force (logged), and at start-up stops the
 * simulator (exit 78) with the problem named.
 *
 * ```json
 * {
 *   "pools": [{ "name": "ams-rack1", "site": "ams", "assets": ["dev-ams1-*"] }],
 *   "grants": [{ "identity": "spiffe://meridian.local/meridian/ams/worker", "sites": ["ams"], "pools": ["*"], "kinds": ["install", "power", "cleanup"] }]
 * }
 * ```
 *
 * An asset belongs to the first pool one of whose patterns (`*` matches any run of characters)
 * matches its id, and so to that pool's site. An operation is allowed when a grant names the caller
 * (exactly, or a pattern such as `spiffe://meridian.local/meridian/ams/*`), the asset's site and
 * pool (or `*`), and the operation's kind. Anything else — an asset in no pool included — is
 * refused with 403 `TargetNotAuthorized`. Reads (an operation or an asset by id) need a grant of
 * any kind on the asset. Without a policy file every verified workload of the trust domain may
 * act on every asset.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { OperationKindSchema, type OperationKind } from '../lib/provider-wire';

const pattern = z.string().min(1).max(300);

export const PolicySchema = z.strictObject({
  pools: z.array(z.strictObject({ name: z.string().min(1).max(100), site: z.string().min(1).max(100), assets: z.array(pattern).min(1) })),
  grants: z.array(
    z.strictObject({
      identity: pattern,
      sites: z.array(pattern).min(1),
      pools: z.array(pattern).min(1),
      kinds: z.array(OperationKindSchema).min(1),
    }),
  ),
});
export type Policy = z.infer<typeof PolicySchema>;

export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyError';
  }
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
      .join('.*')}$`,
  );
}

export interface Decision {
  allowed: boolean;
  /** Why not (names identity, asset, site/pool and kind), for the 403 and the audit entry. */
  reason?: string;
}

/** A compiled policy. */
export class Authorizer {
  private readonly pools: { name: string; site: string; assets: RegExp[] }[];
  private readonly grants: { identity: RegExp; sites: RegExp[]; pools: RegExp[]; kinds: Set<OperationKind> }[];

  constructor(readonly policy: Policy | null) {
    this.pools = (policy?.pools ?? []).map((p) => ({ name: p.name, site: p.site, assets: p.assets.map(globToRegExp) }));
    this.grants = (policy?.grants ?? []).map((g) => ({
      identity: globToRegExp(g.identity),
      sites: g.sites.map(globToRegExp),
      pools: g.pools.map(globToRegExp),
      kinds: new Set(g.kinds),
    }));
  }

  /** Where an asset belongs, or null when no pool claims it. */
  placement(assetId: string): { pool: string; site: string } | null {
    const pool = this.pools.find((p) => p.assets.some((re) => re.test(assetId)));
    return pool ? { pool: pool.name, site: pool.site } : null;
  }

  /** May `identity` run `kind` (or, for a read, any kind: null) on `assetId`? */
  decide(identity: string, assetId: string, kind: OperationKind | null): Decision {
    if (this.policy === null) return { allowed: true };
    const placed = this.placement(assetId);
    const what = kind ?? 'read';
    if (!placed) return { allowed: false, reason: `identity ${identity} may not ${what} asset ${assetId}: the asset is in no pool of the provider's policy` };
    const allowed = this.grants.some(
      (g) =>
        g.identity.test(identity) &&
        g.sites.some((re) => re.test(placed.site)) &&
        g.pools.some((re) => re.test(placed.pool)) &&
        (kind === null ? g.kinds.size > 0 : g.kinds.has(kind)),
    );
    return allowed
      ? { allowed: true }
      : { allowed: false, reason: `identity ${identity} may not ${what} asset ${assetId} (site ${placed.site}, pool ${placed.pool})` };
  }
}

/** Reads and validates a policy file; throws {@link PolicyError} naming the file and the problem. */
export function loadPolicy(file: string): Policy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new PolicyError(`policy file ${file} cannot be read: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new PolicyError(`policy file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = PolicySchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PolicyError(`policy file ${file} is invalid: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}
