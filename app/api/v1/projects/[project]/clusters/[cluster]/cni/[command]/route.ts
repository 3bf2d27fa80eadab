import { z } from 'zod';
import { addLease, checkLease, clusterStatus, gcLeases, releaseLeases } from '@/server/cni/leases';
import { clusterForDel, clusterForToken, delOfGoneCluster, gcGraceSeconds } from '@/server/cni/rest';
import { addInput, checkInput, gcInput, leaseKey } from '@/server/cni/schemas';
import { DomainError } from '@/server/errors';
import { parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; cluster: string; command: string };

/**
 * The CNI lease API: POST add | del | check | gc (the plugin's commands), GET status. The path's
 * project may be `-`, the token's own. An ADD is refused if its token is revoked (checked in its
 * own transaction), so the token it came with need not be read again before it. A DEL for a cluster
 * that does not exist succeeds (it holds nothing), also with the revoked token of a deleted
 * cluster: the container runtime can always tear its pods down.
 */
export const POST = tokenRoute<Params>(
  {
    minRole: 'editor',
    module: 'ipam',
    projectFromToken: true,
    confirmsToken: (p) => p.command === 'add',
    goneCluster: { applies: (p) => p.command === 'del', answer: delOfGoneCluster },
  },
  async ({ db, req, params, principal }) => {
    const actor = tokenActor(principal);
    if (params.command === 'del') {
      const key = leaseKey.parse(await readJson(req));
      // A cluster that does not exist (any more) holds nothing: DEL of what is gone succeeds.
      const cluster = await clusterForDel(db, principal, params.cluster);
      return { released: cluster ? (await releaseLeases(db, cluster, { key }, actor)).length : 0 };
    }
    const cluster = await clusterForToken(db, principal, params.cluster);
    const body = await readJson(req);
    switch (params.command) {
      case 'add': {
        const input = addInput.parse(body);
        return { ips: await addLease(db, cluster, input, actor, principal.tokenId) };
      }
      case 'check': {
        const input = checkInput.parse(body);
        return checkLease(db, cluster, input, input.prevResult.ips, actor);
      }
      case 'gc': {
        const result = await gcLeases(db, cluster, gcInput.parse(body), gcGraceSeconds(), actor);
        return { released: result.released, kept: result.kept, spared: result.spared };
      }
      default:
        throw new DomainError('NotFound', `unknown CNI command "${params.command}"`, 'command');
    }
  },
);

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'ipam', projectFromToken: true }, async ({ db, url, params, principal }) => {
  if (params.command !== 'status') throw new DomainError('NotFound', `unknown CNI command "${params.command}"`, 'command');
  parseQuery(url, z.object({ cniNetwork: z.string().max(253).optional() }));
  const cluster = await clusterForToken(db, principal, params.cluster);
  return clusterStatus(db, cluster);
});
