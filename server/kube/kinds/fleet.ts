import { z } from 'zod';
import { rawTimestamp, type DbOrTx } from '@/db/client';
import { isDomainError } from '@/server/errors';
import { deleteMachine, getMachine, listMachines, requestMachine, type MachineView } from '@/server/fleet/machines';
import { machinePhases } from '@/server/fleet/phases';
import { machineResource } from '@/server/fleet/resources';
import { machineCreateInput, machineInterface } from '@/server/fleet/schemas';
import { declareKind, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/** The fleet kinds of the Kubernetes API (metal.datumapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'metal.datumapis.com';
const VERSION = 'v1alpha1';

/** Held by a machine while its release (verified cleanup through the provider) is under way. */
export const MACHINE_CLEANUP_FINALIZER = 'metal.datumapis.com/cleanup';

// ---- Machine ------------------------------------------------------------------------------------

const machineSpec = z.strictObject({
  class: machineCreateInput.shape.class.describe('The machine class (cores, memory, architecture) from the catalogue. Immutable.'),
  profile: machineCreateInput.shape.profile.describe('The OS profile (image) installed on it. Immutable.'),
  location: machineCreateInput.shape.location.describe('The site it is placed in (fails closed when the site cannot take machines). Immutable.'),
  interfaces: z
    .array(machineInterface.describe('A network interface: its network, address families and how many addresses of each'))
    .max(4)
    .default([])
    .describe('Its network interfaces; each address is an IP claim of the project made with the machine. Immutable.'),
  desiredPower: z.enum(['on', 'off']).default('on').describe('on (default) or off. Immutable.'),
});

const machineStatus = z.object({
  phase: z
    .enum(machinePhases)
    .describe('Where the machine is in its lifecycle (Pending, AwaitingApproval, Allocating, Bound, Installing, Ready, Releasing, Failed)'),
  reason: z.string().nullable().describe('Why it is in that phase (what it waits for, why it failed)'),
  allocation: z.record(z.string(), z.unknown()).nullable().describe('The capacity bound to it: binding id, device reference, epoch, status'),
  addresses: z.array(z.string()).describe('The addresses of its interfaces'),
  lastOperation: z.record(z.string(), z.unknown()).nullable().describe('The newest provider operation'),
});

type Interface = { network: string; families: string[]; addressClasses?: number };

/**
 * Interfaces as a client writes them: `addressClasses` only when it is not the default (1), so
 * that applying the manifest again finds nothing to change (every list here is atomic).
 */
const writtenInterfaces = (interfaces: Interface[]) =>
  interfaces.map(({ addressClasses, ...rest }) => (addressClasses === undefined || addressClasses === 1 ? rest : { ...rest, addressClasses }));

function storedMachine(m: MachineView): StoredObject {
  const r = machineResource(m);
  const requested = m.deletionRequestedAt;
  return {
    uid: m.id,
    name: m.name,
    createdAt: rawTimestamp(m.createdAt),
    spec: { ...r.spec, interfaces: writtenInterfaces(r.spec.interfaces) },
    status: r.status,
    deletionRequestedAt: typeof requested === 'string' || requested instanceof Date ? rawTimestamp(requested) : null,
  };
}

const immutableSpec = (path: keyof z.infer<typeof machineSpec>) => ({ path: `spec.${path}`, value: (spec: Record<string, unknown>) => spec[path] });

/**
 * A machine of the project: created as a machine request (quota and approval as REST v1 and the
 * console request it), deleted as a release that takes time (verified cleanup); a Released
 * machine is gone.
 */
export const machineKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'Machine',
  plural: 'machines',
  singular: 'machine',
  shortNames: ['mach'],
  categories: ['meridian', 'fleet'],
  namespaced: true,
  description:
    'A bare-metal machine: requested (quota-checked, perhaps awaiting approval), bound to capacity, installed; deleting it releases it through a verified cleanup.',
  spec: machineSpec,
  status: machineStatus,
  immutable: [
    immutableSpec('class'),
    immutableSpec('profile'),
    immutableSpec('location'),
    { path: 'spec.interfaces', value: (spec) => (Array.isArray(spec.interfaces) ? writtenInterfaces(spec.interfaces as Interface[]) : undefined) },
    immutableSpec('desiredPower'),
  ],
  printerColumns: [
    { name: 'Phase', type: 'string', description: 'Where the machine is in its lifecycle', value: (o) => o.status.phase },
    { name: 'Site', type: 'string', description: 'The location it is placed in', value: (o) => o.spec.location },
    { name: 'Reason', type: 'string', description: 'Why it is in that phase', value: (o) => o.status.reason ?? '' },
    { name: 'Class', type: 'string', description: 'The machine class', value: (o) => o.spec.class, priority: 1 },
    { name: 'Profile', type: 'string', description: 'The OS profile', value: (o) => o.spec.profile, priority: 1 },
    {
      name: 'Device',
      type: 'string',
      description: 'The device bound to it',
      value: (o) => (o.status.allocation as { deviceRef?: string } | null)?.deviceRef ?? '',
      priority: 1,
    },
    {
      name: 'Addresses',
      type: 'string',
      description: 'The addresses of its interfaces',
      value: (o) => (Array.isArray(o.status.addresses) ? o.status.addresses.join(',') : ''),
      priority: 1,
    },
  ],
  fieldSelectors: {
    'status.phase': (o) => String(o.status.phase),
    'spec.location': (o) => String(o.spec.location),
    'spec.class': (o) => String(o.spec.class),
    'spec.profile': (o) => String(o.spec.profile),
  },
  fieldPath: (field) => (field === 'name' ? 'metadata.name' : `spec.${field}`),
  finalizer: MACHINE_CLEANUP_FINALIZER,
  storage: {
    async get({ db, projectId }, name) {
      try {
        const m = await getMachine(db, projectId, name);
        return m.phase === 'Released' ? undefined : storedMachine(m);
      } catch (e) {
        if (isDomainError(e) && e.code === 'NotFound') return undefined;
        throw e;
      }
    },
    async list({ db, projectId }) {
      const out: StoredObject[] = [];
      for (let offset = 0; ; offset += 200) {
        const page = await listMachines(db, projectId, { limit: 200, offset });
        out.push(...page.items.map(storedMachine));
        if (page.items.length < 200) return out;
      }
    },
    async create({ db, projectId, actor }, { name, spec }, { dryRun }) {
      const input = { name, ...spec };
      const request = (tx: DbOrTx) => requestMachine(tx, projectId, input, actor);
      return storedMachine(dryRun ? await inRolledBackTransaction(db, request) : await request(db));
    },
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const release = (tx: DbOrTx) => deleteMachine(tx, projectId, name, actor);
      await (dryRun ? inRolledBackTransaction(db, release) : release(db));
    },
  },
});
