import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import {
  decodeContinue,
  encodeContinue,
  jsonBody,
  jsonReply,
  operatorRoute,
  optionalJsonBody,
  pageQuery,
  tokenRoute,
  type ApiGroup,
  type RestRoute,
} from '@/server/http/declare';
import { resourceName } from '@/server/ipam/schemas';
import { projectIdBySlug, slugPattern } from '@/server/tenancy/projects';
import { approveMachine, deleteMachine, getMachine, listMachines, rejectMachine, requestMachine } from './machines';
import { cancelMachine } from './cancellation';
import { approvalQueue, forceReleaseMachine, getCapacity, listCapacity, releaseMachineAsOperator, setCapacityState } from './operator';
import { machinePhases } from './phases';
import {
  capacityListOutput,
  capacityOutput,
  machineListOutput,
  machineOutput,
  machineRequestListOutput,
  capacityActionInput,
  capacityResource,
  capacityReturnInput,
  machineCancelInput,
  machineRejectInput,
  machineReleaseInput,
  machineRequestResource,
  machineResource,
  machineResourceInput,
} from './resources';

export const metalApi: ApiGroup = {
  name: 'metal.datumapis.com',
  description:
    'Bare-metal machines: request, follow, release; with an operator token: the approval queue (approve, reject), release, and capacity (quarantine, return, retire)',
  module: 'fleet',
};

const machinePath = z.object({ project: z.string().regex(slugPattern, 'must be a project slug'), name: resourceName });

/**
 * The machine an operator addresses by project slug and name (operators act on every project):
 * the path parameters validated (400 naming the parameter), then NotFound for an unknown project
 * or machine.
 */
async function machineAddress(db: DbOrTx, params: { project: string; name: string }) {
  const { project, name } = machinePath.parse(params);
  const projectId = await projectIdBySlug(db, project);
  return { projectId, machine: await getMachine(db, projectId, name) };
}

/**
 * A capacity's name in the path is its device reference. The provider assigns those, so only what
 * no reference can contain is refused here (control characters, which PostgreSQL would reject).
 */
const deviceRefParam = z.object({
  name: z
    .string()
    .min(1, 'is required')
    .max(253)
    // eslint-disable-next-line no-control-regex -- control characters are exactly what a device reference must not hold
    .regex(/^[^\u0000-\u001f\u007f]+$/, 'must be a device reference'),
});

const MACHINES = '/api/v1/projects/{project}/machines';
const MACHINE = '/api/v1/projects/{project}/machines/{name}';

/** The REST v1 routes of the fleet: a project's machines, and the operators' queue and capacity. */
export const fleetRoutes: RestRoute[] = [
  tokenRoute({
    method: 'GET',
    path: MACHINES,
    group: metalApi,
    summary:
      'List the live machines with phase, allocation, addresses and last operation; phase=Released lists the released ones (their names may be in use again)',
    output: machineListOutput,
    minRole: 'viewer',
    query: z.object({
      ...pageQuery(200, 50),
      phase: z.enum(machinePhases).optional().describe('only this phase; Released lists released machines, which the default list leaves out'),
      search: z.string().max(100).optional().describe('machine name or device reference substring'),
    }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const offset = decodeContinue(q.continue);
      const page = await listMachines(db, principal.projectId, { phase: q.phase, search: q.search, limit: q.limit, offset });
      const next = offset + page.items.length < page.total ? offset + page.items.length : null;
      return { kind: 'MachineList', items: page.items.map(machineResource), metadata: { total: page.total, continue: encodeContinue(next) } };
    },
  }),
  tokenRoute({
    method: 'POST',
    path: MACHINES,
    group: metalApi,
    summary: 'Request a machine (quota-checked in the same transaction; 412 LocationUnavailable fails closed with the reason)',
    output: machineOutput,
    minRole: 'editor',
    body: jsonBody(machineResourceInput),
    handler: async ({ db, body, principal, actor }) => {
      const input = body();
      const machine = await requestMachine(db, principal.projectId, { ...input.spec, name: input.metadata.name }, actor);
      return jsonReply(machineResource(machine), { status: 201 });
    },
  }),
  tokenRoute({
    method: 'GET',
    path: MACHINE,
    group: metalApi,
    summary:
      'Read a machine: phase, reason, allocation (binding, device, epoch), addresses, last provider operation (the live machine of that name, else the newest released one)',
    output: machineOutput,
    minRole: 'viewer',
    handler: async ({ db, params, principal }) => machineResource(await getMachine(db, principal.projectId, resourceName.parse(params.name))),
  }),
  tokenRoute({
    method: 'DELETE',
    path: MACHINE,
    group: metalApi,
    summary: 'Release a machine (202): verified cleanup, then Released',
    output: machineOutput,
    minRole: 'editor',
    handler: async ({ db, params, principal, actor }) => {
      await deleteMachine(db, principal.projectId, resourceName.parse(params.name), actor);
      return jsonReply(machineResource(await getMachine(db, principal.projectId, params.name)), { status: 202 });
    },
  }),
  tokenRoute({
    method: 'POST',
    path: `${MACHINE}/cancel`,
    group: metalApi,
    summary:
      'Cancel a machine request (202): exact before the provider was asked for anything, else compensated by a verified cleanup; 409 InvalidTransition once it is Ready (the install won)',
    output: machineOutput,
    minRole: 'editor',
    body: optionalJsonBody(machineCancelInput),
    handler: async ({ db, params, body, principal, actor }) => {
      const name = resourceName.parse(params.name);
      const { reason } = body();
      await cancelMachine(db, principal.projectId, name, actor, reason || 'cancelled by the tenant');
      return jsonReply(machineResource(await getMachine(db, principal.projectId, name)), { status: 202 });
    },
  }),

  // ---- Operator routes: an operator token only (project and cluster tokens are refused with 403) ----
  operatorRoute({
    method: 'GET',
    path: '/api/v1/machinerequests',
    group: metalApi,
    summary: 'The approval queue: machines of every project awaiting approval, oldest first, with the free capacity matching each',
    output: machineRequestListOutput,
    // Act on one at /api/v1/projects/{project}/machines/{name}/approve (or /reject).
    query: z.object(pageQuery(200, 50)),
    handler: async ({ db, query }) => {
      const q = query();
      const offset = decodeContinue(q.continue);
      const rows = await approvalQueue(db, { limit: q.limit, offset });
      return {
        apiVersion: 'v1',
        kind: 'MachineList',
        items: rows.map(machineRequestResource),
        metadata: { continue: encodeContinue(rows.length === q.limit ? offset + rows.length : null) },
      };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: `${MACHINE}/approve`,
    group: metalApi,
    summary: 'Approve a machine awaiting approval (409 in any other phase); it goes on to allocation',
    output: machineOutput,
    handler: async ({ db, params, actor }) => {
      const { projectId, machine } = await machineAddress(db, params);
      await approveMachine(db, machine.id, actor);
      return machineResource(await getMachine(db, projectId, machine.name));
    },
  }),
  operatorRoute({
    method: 'POST',
    path: `${MACHINE}/reject`,
    group: metalApi,
    summary: 'Reject a machine awaiting approval with a reason; the request ends and its quota and addresses are returned',
    output: machineOutput,
    body: jsonBody(machineRejectInput),
    handler: async ({ db, params, body, actor }) => {
      const input = body();
      const { projectId, machine } = await machineAddress(db, params);
      await rejectMachine(db, machine.id, input.reason, actor);
      return machineResource(await getMachine(db, projectId, machine.name));
    },
  }),
  operatorRoute({
    method: 'POST',
    path: `${MACHINE}/release`,
    group: metalApi,
    summary:
      "Release any project's machine (202, verified cleanup); force: true with a reason ends the binding without the provider and quarantines the capacity",
    output: machineOutput,
    body: optionalJsonBody(machineReleaseInput),
    handler: async ({ db, params, body, actor }) => {
      const input = body();
      const { projectId, machine } = await machineAddress(db, params);
      if (input.force) await forceReleaseMachine(db, machine.id, input.reason, actor);
      else await releaseMachineAsOperator(db, machine.id, input.reason, actor);
      return jsonReply(machineResource(await getMachine(db, projectId, machine.name)), { status: 202 });
    },
  }),

  operatorRoute({
    method: 'GET',
    path: '/api/v1/machinecapacities',
    group: metalApi,
    summary: 'List capacity (named by device reference) with state, health, evidence and the machine bound to it',
    output: capacityListOutput,
    query: z.object({
      ...pageQuery(200, 50),
      state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']).optional().describe('Available, Bound, Cleaning, Quarantined or Retired'),
      location: z.string().max(63).optional().describe('location name'),
      search: z.string().max(100).optional().describe('device reference substring'),
    }),
    handler: async ({ db, query }) => {
      const q = query();
      const offset = decodeContinue(q.continue);
      const page = await listCapacity(db, { state: q.state, location: q.location, search: q.search, limit: q.limit, offset });
      const next = offset + page.items.length < page.total ? offset + page.items.length : null;
      return {
        apiVersion: 'v1',
        kind: 'MachineCapacityList',
        items: page.items.map(capacityResource),
        metadata: { continue: encodeContinue(next), total: page.total },
      };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/machinecapacities/{name}/quarantine',
    group: metalApi,
    summary: 'Quarantine Available capacity (409 otherwise, e.g. while Bound)',
    output: capacityOutput,
    body: optionalJsonBody(capacityActionInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = deviceRefParam.parse(params);
      const input = body();
      await setCapacityState(db, (await getCapacity(db, name)).id, 'quarantine', input.reason, actor);
      return capacityResource(await getCapacity(db, name));
    },
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/machinecapacities/{name}/return',
    group: metalApi,
    summary:
      'Return Quarantined capacity to the pool (202): the provider cleans it again and the cleanup is verified before it is Available (a failed cleanup quarantines it again); force: true with a reason returns it at once, audited. A request waiting for it is woken',
    output: capacityOutput,
    body: optionalJsonBody(capacityReturnInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = deviceRefParam.parse(params);
      const input = body();
      await setCapacityState(db, (await getCapacity(db, name)).id, 'returnToPool', input.reason, actor, { force: input.force });
      return jsonReply(capacityResource(await getCapacity(db, name)), { status: input.force ? 200 : 202 });
    },
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/machinecapacities/{name}/retire',
    group: metalApi,
    summary: 'Retire Available or Quarantined capacity',
    output: capacityOutput,
    body: optionalJsonBody(capacityActionInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = deviceRefParam.parse(params);
      const input = body();
      await setCapacityState(db, (await getCapacity(db, name)).id, 'retire', input.reason, actor);
      return capacityResource(await getCapacity(db, name));
    },
  }),
];
