import type { KindDeclaration } from '@/server/kube/declare';
import { clusterKind, podLeaseKind } from '@/server/kube/kinds/cni';
import { machineKind } from '@/server/kube/kinds/fleet';
import { ipClaimKind, networkKind, retainedAllocationKind } from '@/server/kube/kinds/ipam';

/** Every kind the Kubernetes API serves (server/kube/server.ts), in discovery's order. A kind is added here once declared. */
export const kubeKinds: readonly KindDeclaration[] = [networkKind, ipClaimKind, retainedAllocationKind, clusterKind, podLeaseKind, machineKind];
