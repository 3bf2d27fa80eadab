import type { KindDeclaration } from '@/server/kube/declare';
import { capacityAlertRuleKind, webhookKind } from '@/server/kube/kinds/capacity';
import { clusterKind, podLeaseKind } from '@/server/kube/kinds/cni';
import { installationKind, machineAllocationKind, machineCapacityKind, machineKind } from '@/server/kube/kinds/fleet';
import { ipClaimKind, networkKind, retainedAllocationKind } from '@/server/kube/kinds/ipam';

/**
 * Every kind the Kubernetes API serves (server/kube/server.ts), in discovery's order; a kind's
 * `plane` says which control plane serves it (a project's unless `platform`). A kind is added here
 * once declared.
 */
export const kubeKinds: readonly KindDeclaration[] = [
  networkKind,
  ipClaimKind,
  retainedAllocationKind,
  clusterKind,
  podLeaseKind,
  capacityAlertRuleKind,
  webhookKind,
  machineKind,
  machineAllocationKind,
  installationKind,
  machineCapacityKind,
];
