import { z } from 'zod';
import {
  decodeContinue,
  encodeContinue,
  expectSameAsPath,
  jsonBody,
  jsonReply,
  operatorRoute,
  optionalJsonBody,
  pageQuery,
  projectReadRoute,
  tokenRoute,
  type ApiGroup,
  type RestRoute,
} from '@/server/http/declare';
import { listBuckets, listClaimLog } from './buckets';
import { projectIdBySlug } from '@/server/tenancy/projects';
import { createGrant, deleteGrant, listGrants, updateGrant } from './grants';
import { approveIncreaseRequest, createIncreaseRequest, listIncreaseRequests, rejectIncreaseRequest } from './increases';
import {
  createClaimPolicy,
  createGrantPolicy,
  deleteClaimPolicy,
  deleteGrantPolicy,
  listClaimPolicies,
  listGrantPolicies,
  updateClaimPolicy,
  updateGrantPolicy,
} from './policies';
import { createRegistration, deleteRegistration, getRegistration, listRegistrations, updateRegistration } from './registrations';
import {
  bucketResource,
  claimPolicyReplaceInput,
  claimPolicyResource,
  claimPolicyResourceInput,
  claimResource,
  grantPolicyReplaceInput,
  grantPolicyResource,
  grantPolicyResourceInput,
  grantReplaceInput,
  grantResource,
  grantResourceInput,
  increaseApproveInput,
  increaseRejectInput,
  increaseResource,
  increaseResourceInput,
  registrationPatchInput,
  registrationResource,
  registrationResourceInput,
  claimPolicyOutput,
  grantOutput,
  grantPolicyOutput,
  increaseOutput,
  quotaOutputs,
  registrationOutput,
} from './resources';
import { quotaName, resourceType } from './schemas';

export const quotaApi: ApiGroup = {
  name: 'quota.miloapis.com',
  description:
    "Allowance buckets, resource claims (grant/deny log), grants and increase requests of the token's project; with an operator token: registrations, grants of any project, grant and claim creation policies, and the increase-request queue.",
  module: 'quota',
};

/** A policy's name in the path. */
const policyParams = z.object({ name: quotaName });
/** A grant in the path: its project and name. */
const grantParams = z.object({ project: z.string().min(1).max(63), name: quotaName });
/** An increase request in the path: its id. */
const increaseParams = z.object({ name: z.uuid() });
/** The registration's name is its resource type, `<group>/<resource>`: two path segments. */
const typeFromPath = (params: { group: string; resource: string }) =>
  z.object({ resourceType }).parse({ resourceType: `${params.group}/${params.resource}` }).resourceType;

const REGISTRATIONS = '/api/v1/resourceregistrations';
const REGISTRATION = '/api/v1/resourceregistrations/{group}/{resource}';
const GRANTS = '/api/v1/projects/{project}/resourcegrants';
const GRANT = '/api/v1/projects/{project}/resourcegrants/{name}';
const GRANT_POLICIES = '/api/v1/grantcreationpolicies';
const GRANT_POLICY = '/api/v1/grantcreationpolicies/{name}';
const CLAIM_POLICIES = '/api/v1/claimcreationpolicies';
const CLAIM_POLICY = '/api/v1/claimcreationpolicies/{name}';
const INCREASES = '/api/v1/projects/{project}/quotaincreaserequests';

/** The REST v1 routes of quota: the project's books and requests, and the operators' administration. */
export const quotaRoutes: RestRoute[] = [
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/allowancebuckets',
    output: quotaOutputs.bucketList,
    group: quotaApi,
    summary:
      "List the project's allowance buckets: limit (sum of active grants), allocated (sum of live granted claims), available = max(0, limit − allocated), flag (Ok, Near ≥ 80 %, Full, Over). Operator tokens may read any project's.",
    handler: async ({ db, project }) => {
      const items = await listBuckets(db, project.id);
      return { apiVersion: 'v1', kind: 'AllowanceBucketList', items: items.map(bucketResource), metadata: { continue: null } };
    },
  }),
  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/resourceclaims',
    output: quotaOutputs.claimList,
    group: quotaApi,
    summary:
      'The claim log, newest first: Granted (QuotaAvailable), Released, Denied (QuotaExceeded with requested/available/limit, or ValidationFailed), with the object that caused each',
    minRole: 'viewer',
    query: z.object({
      ...pageQuery(500, 50),
      status: z.enum(['Granted', 'Denied', 'Released']).optional().describe('Granted (live), Released or Denied'),
      resourceType: resourceType.optional().describe('e.g. ipam.miloapis.com/ipclaims'),
      search: z.string().max(100).optional().describe('claim or object name substring'),
    }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const page = await listClaimLog(db, principal.projectId, {
        status: q.status,
        resourceType: q.resourceType,
        search: q.search,
        limit: q.limit,
        offset: decodeContinue(q.continue),
      });
      return {
        apiVersion: 'v1',
        kind: 'ResourceClaimList',
        items: page.items.map((c) => claimResource(c, principal.projectSlug)),
        metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
      };
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: GRANTS,
    output: quotaOutputs.grantList,
    group: quotaApi,
    summary: "List the grants of the project with their Active condition. Operator tokens may read any project's.",
    query: z.object(pageQuery(200, 50)),
    handler: async ({ db, query, project }) => {
      const q = query();
      const page = await listGrants(db, { projectId: project.id, limit: q.limit, offset: decodeContinue(q.continue) });
      return {
        apiVersion: 'v1',
        kind: 'ResourceGrantList',
        items: page.items.map(grantResource),
        metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
      };
    },
  }),
  tokenRoute({
    method: 'GET',
    path: INCREASES,
    output: quotaOutputs.increaseList,
    group: quotaApi,
    summary: "List the project's quota increase requests and their outcome (Pending, Approved with the grant created, Rejected with the reason)",
    minRole: 'viewer',
    query: z.object({ ...pageQuery(200, 50), status: z.enum(['Pending', 'Approved', 'Rejected']).optional().describe('Pending, Approved or Rejected') }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const page = await listIncreaseRequests(db, { projectId: principal.projectId, status: q.status, limit: q.limit, offset: decodeContinue(q.continue) });
      return {
        apiVersion: 'v1',
        kind: 'QuotaIncreaseRequestList',
        items: page.items.map(increaseResource),
        metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
      };
    },
  }),
  tokenRoute({
    method: 'POST',
    path: INCREASES,
    output: increaseOutput,
    group: quotaApi,
    summary: 'Ask for more of a registered resource type, with a reason (one pending request per type: 409 otherwise); an operator approves or rejects it',
    minRole: 'editor',
    body: jsonBody(increaseResourceInput),
    handler: async ({ db, body, principal, actor }) => {
      const created = await createIncreaseRequest(db, principal.projectId, body().spec, actor);
      return jsonReply(increaseResource(created), { status: 201 });
    },
  }),

  // ---- Operator routes: an operator token only (project and cluster tokens are refused with 403) ----
  operatorRoute({
    method: 'GET',
    path: REGISTRATIONS,
    output: quotaOutputs.registrationList,
    group: quotaApi,
    summary: 'List ResourceRegistrations with their Active condition',
    // A short list: one per quota-managed type.
    handler: async ({ db }) => {
      const items = await listRegistrations(db);
      return { apiVersion: 'v1', kind: 'ResourceRegistrationList', items: items.map(registrationResource), metadata: { continue: null, total: items.length } };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: REGISTRATIONS,
    output: registrationOutput,
    group: quotaApi,
    summary:
      "Register a resource type (201); grants waiting for it turn Active and their buckets' limits follow in the same transaction. 409 if already registered.",
    body: jsonBody(registrationResourceInput),
    handler: async ({ db, body, actor }) => jsonReply(registrationResource(await createRegistration(db, body().spec, actor)), { status: 201 }),
  }),
  operatorRoute({
    method: 'GET',
    path: REGISTRATION,
    output: registrationOutput,
    group: quotaApi,
    summary: 'Read the registration of <group>/<resource>',
    handler: async ({ db, params }) => registrationResource(await getRegistration(db, typeFromPath(params))),
  }),
  operatorRoute({
    method: 'PATCH',
    path: REGISTRATION,
    output: registrationOutput,
    group: quotaApi,
    summary: 'Change the fields named in spec (description, units, type, claiming kinds); the resource type is immutable',
    body: jsonBody(registrationPatchInput),
    handler: async ({ db, params, body, actor }) => {
      const type = typeFromPath(params);
      const { resourceType: named, ...changes } = body().spec;
      expectSameAsPath('spec.resourceType', named, type);
      return registrationResource(await updateRegistration(db, type, changes, actor));
    },
  }),
  operatorRoute({
    method: 'DELETE',
    path: REGISTRATION,
    output: quotaOutputs.registrationDeleted,
    group: quotaApi,
    summary: 'Unregister a type (409 while any grant allows it or any live claim holds it)',
    handler: async ({ db, params, actor }) => deleteRegistration(db, typeFromPath(params), actor),
  }),

  operatorRoute({
    method: 'POST',
    path: GRANTS,
    output: grantOutput,
    group: quotaApi,
    summary: "Give any project a grant (201, source Operator); its buckets' limits follow in the same transaction. 409 if the name exists.",
    body: jsonBody(grantResourceInput),
    handler: async ({ db, params, body, actor }) => {
      const input = body();
      expectSameAsPath('spec.consumerRef.name', input.spec.consumerRef?.name, params.project);
      const projectId = await projectIdBySlug(db, params.project);
      const { grant } = await createGrant(db, { projectId, name: input.metadata.name, allowances: input.spec.allowances, source: 'Operator' }, actor);
      return jsonReply(grantResource(grant), { status: 201 });
    },
  }),
  operatorRoute({
    method: 'PUT',
    path: GRANT,
    output: grantOutput,
    group: quotaApi,
    summary: "Replace a grant's allowances; shrinking below what is allocated revokes nothing (the bucket shows Over and new claims are denied)",
    body: jsonBody(grantReplaceInput),
    handler: async ({ db, params, body, actor }) => {
      const { project, name } = grantParams.parse(params);
      const input = body();
      expectSameAsPath('metadata.name', input.metadata?.name, name);
      expectSameAsPath('spec.consumerRef.name', input.spec.consumerRef?.name, project);
      const { grant } = await updateGrant(db, await projectIdBySlug(db, project), name, input.spec.allowances, actor);
      return grantResource(grant);
    },
  }),
  operatorRoute({
    method: 'DELETE',
    path: GRANT,
    output: quotaOutputs.deleted,
    group: quotaApi,
    summary: 'Delete a grant; limits drop in the same transaction (claims are not revoked)',
    handler: async ({ db, params, actor }) => {
      const { project, name } = grantParams.parse(params);
      return deleteGrant(db, await projectIdBySlug(db, project), name, actor);
    },
  }),

  operatorRoute({
    method: 'GET',
    path: GRANT_POLICIES,
    output: quotaOutputs.grantPolicyList,
    group: quotaApi,
    summary: "List GrantCreationPolicies with their Ready condition (the CEL compiler's message when not Ready)",
    handler: async ({ db }) => {
      const items = await listGrantPolicies(db);
      return { apiVersion: 'v1', kind: 'GrantCreationPolicyList', items: items.map(grantPolicyResource), metadata: { continue: null, total: items.length } };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: GRANT_POLICIES,
    output: grantPolicyOutput,
    group: quotaApi,
    summary:
      "Create a GrantCreationPolicy (trigger: Project created). Expressions that do not compile are stored not Ready with the compiler's message, and never applied.",
    body: jsonBody(grantPolicyResourceInput),
    handler: async ({ db, body, actor }) => {
      const input = body();
      const policy = await createGrantPolicy(db, { ...input.spec, name: input.metadata.name }, actor);
      return jsonReply(grantPolicyResource(policy!), { status: 201 });
    },
  }),
  operatorRoute({
    method: 'PUT',
    path: GRANT_POLICY,
    output: grantPolicyOutput,
    group: quotaApi,
    summary: "Replace a GrantCreationPolicy's spec (recompiled; generation bumped)",
    body: jsonBody(grantPolicyReplaceInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = policyParams.parse(params);
      const input = body();
      expectSameAsPath('metadata.name', input.metadata?.name, name);
      return grantPolicyResource((await updateGrantPolicy(db, name, input.spec, actor))!);
    },
  }),
  operatorRoute({
    method: 'DELETE',
    path: GRANT_POLICY,
    output: quotaOutputs.deleted,
    group: quotaApi,
    summary: 'Delete a GrantCreationPolicy (grants it made stay)',
    handler: async ({ db, params, actor }) => deleteGrantPolicy(db, policyParams.parse(params).name, actor),
  }),

  operatorRoute({
    method: 'GET',
    path: CLAIM_POLICIES,
    output: quotaOutputs.claimPolicyList,
    group: quotaApi,
    summary: 'List ClaimCreationPolicies (one per kind) with their Ready condition',
    handler: async ({ db }) => {
      const items = await listClaimPolicies(db);
      return { apiVersion: 'v1', kind: 'ClaimCreationPolicyList', items: items.map(claimPolicyResource), metadata: { continue: null, total: items.length } };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: CLAIM_POLICIES,
    output: claimPolicyOutput,
    group: quotaApi,
    summary: 'Create a ClaimCreationPolicy for a kind (409 if the kind has one). A policy that is not Ready fails creates of its kind (fail closed).',
    body: jsonBody(claimPolicyResourceInput),
    handler: async ({ db, body, actor }) => {
      const input = body();
      const policy = await createClaimPolicy(db, { ...input.spec, name: input.metadata.name }, actor);
      return jsonReply(claimPolicyResource(policy!), { status: 201 });
    },
  }),
  operatorRoute({
    method: 'PUT',
    path: CLAIM_POLICY,
    output: claimPolicyOutput,
    group: quotaApi,
    summary: "Replace a ClaimCreationPolicy's spec (recompiled; generation bumped)",
    body: jsonBody(claimPolicyReplaceInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = policyParams.parse(params);
      const input = body();
      expectSameAsPath('metadata.name', input.metadata?.name, name);
      return claimPolicyResource((await updateClaimPolicy(db, name, input.spec, actor))!);
    },
  }),
  operatorRoute({
    method: 'DELETE',
    path: CLAIM_POLICY,
    output: quotaOutputs.deleted,
    group: quotaApi,
    summary: 'Delete a ClaimCreationPolicy: its kind stops being quota-managed (live claims stay until released)',
    handler: async ({ db, params, actor }) => deleteClaimPolicy(db, policyParams.parse(params).name, actor),
  }),

  operatorRoute({
    method: 'GET',
    path: '/api/v1/quotaincreaserequests',
    output: quotaOutputs.increaseList,
    group: quotaApi,
    summary:
      "The increase-request queue of every project: Pending oldest first (default), or the Approved/Rejected history newest first; each with the project's bucket now",
    query: z.object({
      ...pageQuery(200, 50),
      status: z.enum(['Pending', 'Approved', 'Rejected']).default('Pending').describe('Pending (default), Approved or Rejected'),
    }),
    handler: async ({ db, query }) => {
      const q = query();
      const page = await listIncreaseRequests(db, { status: q.status, limit: q.limit, offset: decodeContinue(q.continue) });
      return {
        apiVersion: 'v1',
        kind: 'QuotaIncreaseRequestList',
        items: page.items.map(increaseResource),
        metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
      };
    },
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/quotaincreaserequests/{name}/approve',
    output: increaseOutput,
    group: quotaApi,
    summary:
      "Approve a pending request (body optional: amount, reason): a grant is created in the same transaction and the bucket's limit grows at once. 409 if already decided.",
    body: optionalJsonBody(increaseApproveInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = increaseParams.parse(params);
      return increaseResource(await approveIncreaseRequest(db, { id: name, ...body() }, actor));
    },
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/quotaincreaserequests/{name}/reject',
    output: increaseOutput,
    group: quotaApi,
    summary: 'Reject a pending request with the reason the tenant reads. 409 if already decided.',
    body: jsonBody(increaseRejectInput),
    handler: async ({ db, params, body, actor }) => {
      const { name } = increaseParams.parse(params);
      return increaseResource(await rejectIncreaseRequest(db, { id: name, reason: body().reason }, actor));
    },
  }),
];
