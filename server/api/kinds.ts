import type { KindDeclaration } from '@/server/kube/declare';
import { capacityAlertRuleKind, webhookKind } from '@/server/kube/kinds/capacity';
import { clusterKind, podLeaseKind } from '@/server/kube/kinds/cni';
import { installationKind, machineAllocationKind, machineCapacityKind, machineKind } from '@/server/kube/kinds/fleet';
import { ipClaimKind, networkKind, retainedAllocationKind } from '@/server/kube/kinds/ipam';
import {
  allowanceBucketKind,
  claimCreationPolicyKind,
  grantCreationPolicyKind,
  platformQuotaIncreaseRequestKind,
  quotaIncreaseRequestKind,
  resourceClaimKind,
  resourceGrantKind,
  resourceRegistrationKind,
} from '@/server/kube/kinds/quota';
import { invitationKind, memberKind, platformOrganizationKind, platformProjectKind } from '@/server/kube/kinds/tenancy';

/**
 * Every kind the Kubernetes API serves (server/kube/server.ts), in discovery's order: a project's
 * control plane serves those of plane `project` (the default), the platform control plane those of
 * plane `platform`. A kind is added here once declared.
 */
export const kubeKinds: readonly KindDeclaration[] = [
  networkKind,
  ipClaimKind,
  retainedAllocationKind,
  allowanceBucketKind,
  resourceClaimKind,
  resourceGrantKind,
  quotaIncreaseRequestKind,
  memberKind,
  invitationKind,
  resourceRegistrationKind,
  grantCreationPolicyKind,
  claimCreationPolicyKind,
  platformQuotaIncreaseRequestKind,
  platformOrganizationKind,
  platformProjectKind,
  clusterKind,
  podLeaseKind,
  capacityAlertRuleKind,
  webhookKind,
  machineKind,
  machineAllocationKind,
  installationKind,
  machineCapacityKind,
];
