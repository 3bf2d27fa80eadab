import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { claimCreationPolicies, grantCreationPolicies, type QuotaConstraint } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgError } from '@/server/errors';
import { CelCompileError, compileExpression, compileTemplate } from './cel';
import type { ClaimPolicyInput, GrantPolicyInput } from './schemas';

/** The Ready condition a policy gets when saved: compiled, or the compiler's message per field. */
export interface ReadyCondition {
  ready: boolean;
  readyReason: 'Compiled' | 'CompilationFailed';
  readyMessage: string;
}

function compileAll(items: { field: string; source: string; template: boolean }[]): ReadyCondition {
  const problems: string[] = [];
  for (const item of items) {
    try {
      if (item.template) compileTemplate(item.source);
      else compileExpression(item.source);
    } catch (e) {
      if (!(e instanceof CelCompileError)) throw e;
      problems.push(`${item.field}: ${e.message}`);
    }
  }
  return problems.length
    ? { ready: false, readyReason: 'CompilationFailed', readyMessage: problems.join('; ') }
    : { ready: true, readyReason: 'Compiled', readyMessage: 'all expressions compiled' };
}

const constraintItems = (constraints: QuotaConstraint[]) =>
  constraints.map((c, i) => ({ field: `constraints[${i}].expression`, source: c.expression, template: false }));

/** Compiles every expression of a GrantCreationPolicy. */
export function compileGrantPolicy(p: Pick<GrantPolicyInput, 'constraints' | 'grantNameTemplate'>): ReadyCondition {
  return compileAll([...constraintItems(p.constraints), { field: 'grantNameTemplate', source: p.grantNameTemplate, template: true }]);
}

/** Compiles every expression of a ClaimCreationPolicy (constraints, name template, templated amounts). */
export function compileClaimPolicy(p: Pick<ClaimPolicyInput, 'constraints' | 'claimNameTemplate' | 'requests'>): ReadyCondition {
  return compileAll([
    ...constraintItems(p.constraints),
    { field: 'claimNameTemplate', source: p.claimNameTemplate, template: true },
    ...p.requests.flatMap((r, i) => (typeof r.amount === 'string' ? [{ field: `requests[${i}].amount`, source: r.amount, template: true }] : [])),
  ]);
}

function conflict(e: unknown, what: string): never {
  const pg = pgError(e);
  if (pg?.code === '23505') {
    if (pg.constraint?.includes('trigger_kind'))
      throw new DomainError('Conflict', `a ClaimCreationPolicy for this kind already exists (one policy per kind)`, 'triggerKind');
    throw new DomainError('Conflict', `${what} already exists`, 'name');
  }
  throw e;
}

// ---- GrantCreationPolicy -------------------------------------------------------------------

export async function listGrantPolicies(db: DbOrTx) {
  return db.select().from(grantCreationPolicies).orderBy(asc(grantCreationPolicies.name));
}

/** Saves a new GrantCreationPolicy; invalid CEL is stored not Ready (with the message), never applied. */
export async function createGrantPolicy(db: DbOrTx, input: GrantPolicyInput, actor: Actor) {
  const condition = compileGrantPolicy(input);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(grantCreationPolicies)
        .values({ ...input, ...condition, createdBy: actor.label })
        .returning();
      await recordEvent(tx, {
        actor,
        action: 'quota.grantpolicy.create',
        objectType: 'grantcreationpolicy',
        objectId: row.id,
        objectName: row.name,
        after: input,
        reason: condition.ready ? null : condition.readyMessage,
      });
      return row;
    });
  } catch (e) {
    conflict(e, `GrantCreationPolicy "${input.name}"`);
  }
}

/** Replaces a GrantCreationPolicy's spec (recompiled; generation bumped). */
export async function updateGrantPolicy(db: DbOrTx, name: string, input: Omit<GrantPolicyInput, 'name'>, actor: Actor) {
  const condition = compileGrantPolicy(input);
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(grantCreationPolicies).where(eq(grantCreationPolicies.name, name)).for('update');
    if (!before) throw new DomainError('NotFound', `GrantCreationPolicy "${name}" not found`, 'name');
    const [row] = await tx
      .update(grantCreationPolicies)
      .set({ ...input, ...condition, generation: before.generation + 1, updatedAt: new Date() })
      .where(eq(grantCreationPolicies.id, before.id))
      .returning();
    await recordEvent(tx, {
      actor,
      action: 'quota.grantpolicy.update',
      objectType: 'grantcreationpolicy',
      objectId: row.id,
      objectName: name,
      before: { constraints: before.constraints, grantNameTemplate: before.grantNameTemplate, allowances: before.allowances, enabled: before.enabled },
      after: input,
      reason: condition.ready ? null : condition.readyMessage,
    });
    return row;
  });
}

export async function deleteGrantPolicy(db: DbOrTx, name: string, actor: Actor) {
  return db.transaction(async (tx) => {
    const [row] = await tx.delete(grantCreationPolicies).where(eq(grantCreationPolicies.name, name)).returning();
    if (!row) throw new DomainError('NotFound', `GrantCreationPolicy "${name}" not found`, 'name');
    await recordEvent(tx, { actor, action: 'quota.grantpolicy.delete', objectType: 'grantcreationpolicy', objectId: row.id, objectName: name, before: row });
    return { name };
  });
}

// ---- ClaimCreationPolicy -------------------------------------------------------------------

export async function listClaimPolicies(db: DbOrTx) {
  return db.select().from(claimCreationPolicies).orderBy(asc(claimCreationPolicies.triggerKind));
}

/** Saves a new ClaimCreationPolicy (one per kind); invalid CEL is stored not Ready with the message. */
export async function createClaimPolicy(db: DbOrTx, input: ClaimPolicyInput, actor: Actor) {
  const condition = compileClaimPolicy(input);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(claimCreationPolicies)
        .values({ ...input, ...condition, createdBy: actor.label })
        .returning();
      await recordEvent(tx, {
        actor,
        action: 'quota.claimpolicy.create',
        objectType: 'claimcreationpolicy',
        objectId: row.id,
        objectName: row.name,
        after: input,
        reason: condition.ready ? null : condition.readyMessage,
      });
      return row;
    });
  } catch (e) {
    conflict(e, `ClaimCreationPolicy "${input.name}"`);
  }
}

/**
 * Replaces a ClaimCreationPolicy's spec. If the new expressions do not compile the policy turns
 * not Ready, and creates of its kind fail with `PolicyFailed` until it is fixed (fail closed).
 */
export async function updateClaimPolicy(db: DbOrTx, name: string, input: Omit<ClaimPolicyInput, 'name'>, actor: Actor) {
  const condition = compileClaimPolicy(input);
  try {
    return await db.transaction(async (tx) => {
      const [before] = await tx.select().from(claimCreationPolicies).where(eq(claimCreationPolicies.name, name)).for('update');
      if (!before) throw new DomainError('NotFound', `ClaimCreationPolicy "${name}" not found`, 'name');
      const [row] = await tx
        .update(claimCreationPolicies)
        .set({ ...input, ...condition, generation: before.generation + 1, updatedAt: new Date() })
        .where(eq(claimCreationPolicies.id, before.id))
        .returning();
      await recordEvent(tx, {
        actor,
        action: 'quota.claimpolicy.update',
        objectType: 'claimcreationpolicy',
        objectId: row.id,
        objectName: name,
        before: {
          triggerKind: before.triggerKind,
          constraints: before.constraints,
          claimNameTemplate: before.claimNameTemplate,
          requests: before.requests,
          enabled: before.enabled,
        },
        after: input,
        reason: condition.ready ? null : condition.readyMessage,
      });
      return row;
    });
  } catch (e) {
    conflict(e, `ClaimCreationPolicy "${name}"`);
  }
}

/** Deletes a ClaimCreationPolicy: its kind stops being quota-managed (live claims stay until released). */
export async function deleteClaimPolicy(db: DbOrTx, name: string, actor: Actor) {
  return db.transaction(async (tx) => {
    const [row] = await tx.delete(claimCreationPolicies).where(eq(claimCreationPolicies.name, name)).returning();
    if (!row) throw new DomainError('NotFound', `ClaimCreationPolicy "${name}" not found`, 'name');
    await recordEvent(tx, { actor, action: 'quota.claimpolicy.delete', objectType: 'claimcreationpolicy', objectId: row.id, objectName: name, before: row });
    return { name };
  });
}
