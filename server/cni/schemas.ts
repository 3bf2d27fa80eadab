import { z } from 'zod';
import { resourceName } from '@/server/ipam/schemas';

/** CNI lease API inputs (validated at the REST edge; the plugin sends these). */
const cniNetwork = z.string().min(1, 'is required').max(253);
const containerId = z
  .string()
  .min(1, 'is required')
  .max(256)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be alphanumeric with _ . -');
const ifname = z
  .string()
  .min(1, 'is required')
  .max(15)
  .regex(/^[^\s/:]+$/, 'must be an interface name');
const k8sName = z.string().max(253).optional();

export const leaseKey = z.strictObject({ cniNetwork, containerId, ifname });
const node = z
  .string()
  .min(1, 'is required')
  .max(253)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be a node name');
export const addInput = leaseKey.extend({
  node,
  podNamespace: k8sName,
  podName: k8sName,
});
export const checkInput = leaseKey.extend({
  /**
   * The CNI result of the previous ADD, passed through by the plugin as the runtime gave it: a CNI
   * spec document (interfaces, routes, dns, later versions' fields), so only `ips` is read and any
   * other key is left alone rather than refused.
   */
  prevResult: z.object({ ips: z.array(z.object({ address: z.string().max(64) }).passthrough()).max(8) }).passthrough(),
});
export const gcInput = z.strictObject({
  cniNetwork,
  /**
   * The node whose runtime sends the list: a runtime knows its own node's attachments only, so GC
   * considers that node's leases only (a list from one node says nothing of another's pods).
   */
  node,
  validAttachments: z.array(z.strictObject({ containerID: z.string().max(256), ifname: z.string().max(15) })).max(100_000),
});

export const clusterCreateInput = z.strictObject({
  name: resourceName,
  network: resourceName,
  description: z.string().max(500).optional(),
  nodeBlockPrefixV4: z.number().int().min(20).max(30).optional(),
  nodeBlockPrefixV6: z.number().int().min(112).max(126).optional(),
});

export type AddInput = z.infer<typeof addInput>;
export type LeaseKey = z.infer<typeof leaseKey>;
