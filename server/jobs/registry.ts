import type { MeridianTask } from './types';
import { ipallocationExpire } from './ipallocation__expire';
import { systemHeartbeatPrune } from './system__heartbeat-prune';

/**
 * Every task the worker runs, by name (`<entity>__<verb>`). Features add theirs here; the crontab
 * below schedules the recurring ones.
 */
export const tasks: Record<string, MeridianTask> = {
  system__heartbeat_prune: systemHeartbeatPrune,
  ipallocation__expire: ipallocationExpire,
};

export const crontab = ['0 * * * * system__heartbeat_prune ?fill=1h'];
