import { z } from 'zod';
import { sqlFunctionBatches } from '@/db/batch';
import type { Db } from '@/db/client';
import { ipamClaimLanes } from '@/server/env';

/**
 * IP claim creates in batches (db/batch.ts). A claim holds its project's quota bucket row and its
 * pool's row until it commits, so concurrent claims of one project would queue one commit after
 * another (and crowd PostgreSQL's lock manager); the creates that arrive while a batch is in flight
 * go together as the next `ipam_claim_create_many` statement (server/ipam/sql/ipam_claim_create_many.sql), acknowledged at its
 * commit. Pinned claims and dry runs, which are refused or undone by raising, run alone.
 *
 * A refusal inside a batch comes back as the error the single statement raises (MQ001 with the
 * denied request's index, MQ002), so createClaim handles both paths alike. A batch that raises (a
 * lost race for a name, a project being deleted) is undone whole and its claims run one by one.
 */

/** What `ipam_claim_create` takes for one claim (server/ipam/claims.ts builds it). */
export interface ClaimCreateArgs {
  project: string;
  network: string;
  [key: string]: unknown;
}

/** `ipam_claim_try`'s refusal (server/ipam/sql/ipam_claim_try.sql); its other answers go back to createClaim as they are. */
const refused = z.discriminatedUnion('refused', [
  z.object({ kind: z.literal('refused'), refused: z.literal('quotaExceeded'), index: z.number() }),
  z.object({ kind: z.literal('refused'), refused: z.literal('quotaNameTaken') }),
]);

/** The single statement's refusal, as the driver raises it. */
function refusal(answer: unknown): Error | undefined {
  if (typeof answer !== 'object' || answer === null || !('kind' in answer) || answer.kind !== 'refused') return undefined;
  const tried = refused.parse(answer);
  if (tried.refused === 'quotaExceeded') return Object.assign(new Error('quota exceeded'), { code: 'MQ001', detail: String(tried.index) });
  return Object.assign(new Error('quota claim name taken'), { code: 'MQ002' });
}

const createClaims = sqlFunctionBatches<ClaimCreateArgs>({
  one: 'ipam_claim_create',
  many: 'ipam_claim_create_many',
  // One lock order for every batch: buckets project by project, pools network by network.
  lockKeys: (a) => [a.project, a.network],
  // Claims of one project share a lane (they meet on its bucket row); projects spread over
  // IPAM_CLAIM_LANES lanes, by default sized from the main pool (server/env.ts).
  laneKeys: (a) => [a.project],
  lanes: ipamClaimLanes,
  maxBatch: 64,
  outcome: (answer) => {
    const error = refusal(answer);
    return error ? { error } : { value: answer };
  },
});

/** Runs one claim create (not pinned, not a dry run) in `db`'s next batch: `ipam_claim_create`'s result, or its error. */
export function createInBatch(db: Db, args: ClaimCreateArgs): Promise<unknown> {
  return createClaims(db, args);
}
