import { z } from 'zod';
import type { BucketView, ClaimLogEntry } from './buckets';
import type { GrantView } from './grants';
import type { IncreaseView } from './increases';
import { increaseCreateInput } from './schemas';

/**
 * REST v1 resource shapes of the quota group (`{ apiVersion, kind, metadata, spec, status }`) and
 * their mapping from the domain's views. The domain knows nothing of this shape.
 */
export const QUOTA_API_VERSION = 'quota.miloapis.com/v1alpha1';

const consumerRef = (project: string) => ({ apiGroup: 'resourcemanager.miloapis.com', kind: 'Project', name: project });

export function bucketResource(b: BucketView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'AllowanceBucket',
    metadata: { name: `${b.project}.${b.resourceType.replace('/', '.')}` },
    spec: { consumerRef: consumerRef(b.project), resourceType: b.resourceType },
    status: {
      limit: b.limit,
      allocated: b.allocated,
      available: b.available,
      utilization: b.utilization,
      flag: b.flag,
      claimCount: b.claimCount,
      grantCount: b.grantCount,
      registered: b.registered,
      displayUnit: b.displayUnit,
      lastReconciliation: b.updatedAt,
    },
  };
}

export function claimResource(c: ClaimLogEntry, project: string) {
  const granted = c.status !== 'Denied';
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ResourceClaim',
    metadata: { name: c.name, uid: c.id, creationTimestamp: c.createdAt },
    spec: { consumerRef: consumerRef(project), requests: c.requests, resourceRef: c.resourceRef },
    status: {
      phase: c.status,
      conditions: [{ type: 'Granted', status: granted ? 'True' : 'False', reason: c.reason, message: c.message }],
      allocations: c.allocations,
      policy: c.policyName,
      requestedBy: c.createdBy,
      releasedAt: c.releasedAt,
    },
  };
}

export function grantResource(g: GrantView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ResourceGrant',
    metadata: { name: g.name, uid: g.id, creationTimestamp: g.createdAt },
    spec: { consumerRef: consumerRef(g.project), allowances: g.allowances },
    status: {
      conditions: [{ type: 'Active', status: g.active ? 'True' : 'False', reason: g.activeReason, message: g.activeMessage }],
      source: g.source,
      sourceRef: g.sourceRef,
    },
  };
}

export function increaseResource(r: IncreaseView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'QuotaIncreaseRequest',
    metadata: { name: r.id, uid: r.id, creationTimestamp: r.createdAt },
    spec: { consumerRef: consumerRef(r.project), resourceType: r.resourceType, amount: r.amount, reason: r.reason },
    status: {
      phase: r.status,
      requestedBy: r.requestedBy,
      decidedBy: r.decidedBy,
      decidedAt: r.decidedAt,
      decisionReason: r.decisionReason,
      approvedAmount: r.approvedAmount,
      grantRef: r.grantName ? { kind: 'ResourceGrant', name: r.grantName } : null,
    },
  };
}

export const increaseResourceInput = z.object({
  apiVersion: z.string().optional(),
  kind: z.literal('QuotaIncreaseRequest').optional(),
  spec: increaseCreateInput,
});
