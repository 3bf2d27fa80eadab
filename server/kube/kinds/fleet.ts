import { z } from 'zod';
import { rawTimestamp, type DbOrTx } from '@/db/client';
import { isDomainError } from '@/server/errors';
import { listAllocations, listInstallations } from '@/server/fleet/bindings';
import { getCapacity, listCapacity, type CapacityView } from '@/server/fleet/operator';
import { deleteMachine, getMachine, listMachines, requestMachine, type MachineView } from '@/server/fleet/machines';
import { machinePhases } from '@/server/fleet/phases';
import { capacityResource, machineResource } from '@/server/fleet/resources';
import { machineCreateInput, machineInterface } from '@/server/fleet/schemas';
import { declareKind, ownRow, platformRow, type KindContext, type StoredObject, type WatchSource } from '../declare';
import { machineProject } from './lookup';
import { inRolledBackTransaction } from '../dry-run';

/** The fleet kinds of the Kubernetes API (metal.datumapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'metal.datumapis.com';
const VERSION = 'v1alpha1';

/** Held by a machine while its release (verified cleanup through the provider) is under way. */
const MACHINE_CLEANUP_FINALIZER = 'metal.datumapis.com/cleanup';

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

/** A row naming its machine (an allocation, an installation): an object of the machine's project, named by its id. */
const ofMachine = (table: string): WatchSource => ({
  table,
  object: async (r, db) => {
    const projectId = r.machine_id ? await machineProject(db, r.machine_id) : null;
    return projectId && r.id ? { projectId, uid: r.id, name: r.id } : null;
  },
  exists: () => true,
});

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
  watch: [{ table: 'machines', object: (r) => ownRow(r), exists: (r) => r.phase !== 'Released' }],
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

// ---- MachineAllocation --------------------------------------------------------------------------

const allocationSpec = z.strictObject({
  machine: z.string().describe('The machine bound'),
  deviceRef: z.string().describe('The device (capacity) it is bound to'),
  epoch: z.number().int().describe("The binding's epoch on that device (every binding advances it)"),
});

const allocationStatus = z.object({
  status: z.enum(['Preparing', 'Committed', 'Releasing', 'Released']).describe('Where the binding is'),
  releaseReason: z.string().nullable().describe('Why it was released'),
  releasedAt: z.string().nullable().describe('When it was released'),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The binding of one of the project's machines to a device, named by its binding id: made and ended by the system, read-only here. */
export const machineAllocationKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'MachineAllocation',
  plural: 'machineallocations',
  singular: 'machineallocation',
  shortNames: ['malloc'],
  categories: ['meridian', 'fleet'],
  namespaced: true,
  description: "The binding of a machine to a device (capacity), named by the binding id the provider sees; the history of a project's machines.",
  spec: allocationSpec,
  status: allocationStatus,
  immutable: [],
  printerColumns: [
    { name: 'Machine', type: 'string', description: 'The machine bound', value: (o) => o.spec.machine },
    { name: 'Device', type: 'string', description: 'The device', value: (o) => o.spec.deviceRef },
    { name: 'Epoch', type: 'integer', description: "The binding's epoch", value: (o) => o.spec.epoch },
    { name: 'Status', type: 'string', description: 'Where the binding is', value: (o) => o.status.status },
  ],
  fieldSelectors: { 'spec.machine': (o) => String(o.spec.machine), 'status.status': (o) => String(o.status.status) },
  readOnly: true,
  watch: [ofMachine('machine_allocations')],
  storage: {
    get: async (ctx, name) => (await allocations(ctx)).find((a) => a.name === name),
    list: (ctx) => allocations(ctx),
  },
});

async function allocations({ db, projectId }: KindContext): Promise<StoredObject[]> {
  return (await listAllocations(db, projectId)).map((a) => ({
    uid: a.id,
    name: a.id,
    createdAt: a.createdAt,
    spec: { machine: a.machine, deviceRef: a.deviceRef, epoch: a.epoch },
    status: { status: a.status, releaseReason: a.releaseReason, releasedAt: iso(a.releasedAt) },
  }));
}

// ---- Installation -------------------------------------------------------------------------------

const installationSpec = z.strictObject({
  machine: z.string().describe('The machine installed'),
  allocation: z.string().describe('The binding it was installed on'),
  imageDigest: z.string().describe("The image's digest"),
  predecessor: z.string().nullable().describe('The installation a reinstall replaced'),
});

const installationStatus = z.object({
  status: z.enum(['Pending', 'Succeeded', 'Failed']).describe('The outcome'),
  operation: z.string().describe('The provider operation that installs it'),
  completedAt: z.string().nullable().describe('When it finished'),
});

/** One installation of an image on a machine's binding, named by its id: made by the reconciler, read-only here. */
export const installationKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'Installation',
  plural: 'installations',
  singular: 'installation',
  shortNames: ['inst'],
  categories: ['meridian', 'fleet'],
  namespaced: true,
  description: "An installation of an OS image on a machine's binding (a reinstall names its predecessor); made by the reconciler.",
  spec: installationSpec,
  status: installationStatus,
  immutable: [],
  printerColumns: [
    { name: 'Machine', type: 'string', description: 'The machine', value: (o) => o.spec.machine },
    { name: 'Status', type: 'string', description: 'The outcome', value: (o) => o.status.status },
    { name: 'Image', type: 'string', description: "The image's digest", value: (o) => o.spec.imageDigest, priority: 1 },
  ],
  fieldSelectors: { 'spec.machine': (o) => String(o.spec.machine), 'status.status': (o) => String(o.status.status) },
  readOnly: true,
  watch: [ofMachine('installations')],
  storage: {
    get: async (ctx, name) => (await installationsOf(ctx)).find((i) => i.name === name),
    list: (ctx) => installationsOf(ctx),
  },
});

async function installationsOf({ db, projectId }: KindContext): Promise<StoredObject[]> {
  return (await listInstallations(db, projectId)).map((i) => ({
    uid: i.id,
    name: i.id,
    createdAt: i.createdAt,
    spec: { machine: i.machine, allocation: i.allocationId, imageDigest: i.imageDigest, predecessor: i.predecessorId },
    status: { status: i.status, operation: i.operationId, completedAt: iso(i.completedAt) },
  }));
}

// ---- MachineCapacity (the platform's) -----------------------------------------------------------

const capacitySpec = z.strictObject({
  deviceRef: z.string().describe("The provider's device reference (its name)"),
  class: z.string().describe('The machine class it provides'),
  location: z.string().describe('Where it is'),
});

const capacityStatus = z.object({
  state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']).describe('Where the device is'),
  reason: z.string().nullable().describe('Why it is in that state'),
  health: z.string().describe('Healthy, Degraded or Unhealthy'),
  available: z.boolean().describe("The provider's availability evidence"),
  observedAt: z.string().nullable().describe('When that evidence was observed'),
  assetEpoch: z.number().int().describe("The device's binding epoch"),
  boundTo: z.record(z.string(), z.unknown()).nullable().describe('The project and machine bound to it'),
});

function storedCapacity(c: CapacityView): StoredObject {
  const r = capacityResource(c);
  const { updatedAt: _updatedAt, ...status } = r.status;
  return { uid: c.id, name: c.deviceRef, createdAt: null, spec: r.spec, status: { ...status, observedAt: iso(status.observedAt) } };
}

/**
 * The fleet's devices, named by device reference: platform-wide (no project), served on the
 * platform control plane to operators. The system and the operators' actions (REST v1, console)
 * change its state; here it is read, and labelled.
 */
export const machineCapacityKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'MachineCapacity',
  plural: 'machinecapacities',
  singular: 'machinecapacity',
  shortNames: ['mcap'],
  categories: ['meridian', 'fleet'],
  namespaced: false,
  plane: 'platform',
  description: 'A device of the fleet, named by its device reference: its class, location, state and the machine bound to it.',
  spec: capacitySpec,
  status: capacityStatus,
  immutable: [
    { path: 'spec.deviceRef', value: (spec) => spec.deviceRef },
    { path: 'spec.class', value: (spec) => spec.class },
    { path: 'spec.location', value: (spec) => spec.location },
  ],
  printerColumns: [
    { name: 'State', type: 'string', description: 'Where the device is', value: (o) => o.status.state },
    { name: 'Class', type: 'string', description: 'The machine class', value: (o) => o.spec.class },
    { name: 'Site', type: 'string', description: 'Where it is', value: (o) => o.spec.location },
    { name: 'Health', type: 'string', description: 'Healthy, Degraded or Unhealthy', value: (o) => o.status.health, priority: 1 },
    {
      name: 'Bound',
      type: 'string',
      description: 'project/machine bound to it',
      value: (o) => {
        const b = o.status.boundTo as { project?: string | null; name?: string } | null;
        return b ? `${b.project ?? ''}/${b.name ?? ''}` : '';
      },
      priority: 1,
    },
  ],
  fieldSelectors: {
    'status.state': (o) => String(o.status.state),
    'spec.location': (o) => String(o.spec.location),
    'spec.class': (o) => String(o.spec.class),
  },
  watch: [{ table: 'machine_capacity', object: (r) => platformRow(r, r.device_ref), exists: () => true }],
  storage: {
    async get({ db }, name) {
      try {
        return storedCapacity(await getCapacity(db, name));
      } catch (e) {
        if (isDomainError(e) && e.code === 'NotFound') return undefined;
        throw e;
      }
    },
    async list({ db }) {
      const out: StoredObject[] = [];
      for (let offset = 0; ; offset += 500) {
        const page = await listCapacity(db, { limit: 500, offset });
        out.push(...page.items.map(storedCapacity));
        if (page.items.length < 500) return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      }
    },
  },
});
