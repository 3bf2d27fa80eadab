import { z } from 'zod';
import { addLease, checkLease, clusterStatus, gcLeases, releaseLeases } from '@/server/cni/leases';
import { clusterForToken, gcGraceSeconds } from '@/server/cni/rest';
import { addInput, checkInput, gcInput, leaseKey } from '@/server/cni/schemas';
import { DomainError } from '@/server/errors';
import { parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; cluster: string; command: string };

/**
 * The CNI lease API: POST add | del | check | gc (the plugin's commands), GET status. An ADD is
 * refused if its token is revoked (checked in its own transaction), so the token it
 * came with need not be read again before it.
 */
export const POST = tokenRoute<Params>({ minRole: 'editor', module: 'ipam', confirmsToken: (p) => p.command === 'add' }, async ({ db, req, params, principal }) => {
  const cluster = await clusterForToken(db, principal, params.cluster);
  const actor = tokenActor(principal);
  const body = await readJson(req);
  switch (params.command) {
    case 'add': {
      const input = addInput.parse(body);
      return { ips: await addLease(db, cluster, input, actor, principal.tokenId) };
    }
    case 'del': {
      const released = await releaseLeases(db, cluster, { key: leaseKey.parse(body) }, actor);
      return { released: released.length };
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
});

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'ipam' }, async ({ db, url, params, principal }) => {
  if (params.command !== 'status') throw new DomainError('NotFound', `unknown CNI command "${params.command}"`, 'command');
  parseQuery(url, z.object({ cniNetwork: z.string().max(253).optional() }));
  const cluster = await clusterForToken(db, principal, params.cluster);
  return clusterStatus(db, cluster);
});
