import { env } from '@/server/env';
import type { MeridianTask } from './types';
import { capacityPrune } from './tasks/capacity__prune';
import { capacitySample } from './tasks/capacity__sample';
import { webhookDeliver } from './tasks/webhook__deliver';
import { capacityReconcile } from './tasks/capacity__reconcile';
import { clusterDelete } from './tasks/cluster__delete';
import { cniReturnBlock } from './tasks/cni__return_block';
import { fleetResync } from './tasks/fleet__resync';
import { ipallocationExpire } from './tasks/ipallocation__expire';
import { machineReconcile } from './tasks/machine__reconcile';
import { projectDelete } from './tasks/project__delete';
import { quotaAudit } from './tasks/quota__audit';
import { quotaPruneClaimLog } from './tasks/quota__prune_claim_log';
import { systemHeartbeatPrune } from './tasks/system__heartbeat_prune';

/**
 * Every task the worker runs, by name (`<entity>__<verb>`). Features add theirs here; the crontab
 * below schedules the recurring ones.
 */
export const tasks: Record<string, MeridianTask> = {
  system__heartbeat_prune: systemHeartbeatPrune,
  ipallocation__expire: ipallocationExpire,
  cni__return_block: cniReturnBlock,
  cluster__delete: clusterDelete,
  machine__reconcile: machineReconcile,
  capacity__reconcile: capacityReconcile,
  fleet__resync: fleetResync,
  project__delete: projectDelete,
  quota__audit: quotaAudit,
  quota__prune_claim_log: quotaPruneClaimLog,
  capacity__sample: capacitySample,
  capacity__prune: capacityPrune,
  webhook__deliver: webhookDeliver,
};

/** The recurring jobs; the capacity sampler's interval is CAPACITY_SAMPLE_MINUTES. */
export function crontab(sampleMinutes = env().CAPACITY_SAMPLE_MINUTES): string[] {
  const every = sampleMinutes === 1 ? '*' : sampleMinutes === 60 ? '0' : `*/${sampleMinutes}`;
  return [
    '0 * * * * system__heartbeat_prune ?fill=1h',
    '* * * * * fleet__resync',
    '*/5 * * * * quota__audit',
    '30 3 * * * quota__prune_claim_log',
    `${every} * * * * capacity__sample`,
    '17 * * * * capacity__prune',
  ];
}
