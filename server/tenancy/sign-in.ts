import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { recordEvent } from '@/server/audit/events';
import { dummyPasswordHash, verifyPassword } from './password';
import type { SessionUser } from './roles';
import { findUserByEmail } from './users';

/**
 * How password guessing is slowed down. Nothing locks an account: guesses are counted per
 * (client, account) and per client, and past a number of free failures each further attempt from
 * that key must wait a delay that doubles (1 s, 2 s, 4 s, … up to `maxDelaySeconds`). The same
 * account from another client is unaffected, so a stranger cannot lock anyone out.
 */
export interface SignInPolicy {
  /** Failures one client may make at one account before delays begin. */
  accountFreeFailures: number;
  /** Failures one client may make across all accounts before delays begin (spraying). */
  clientFreeFailures: number;
  /** The longest delay. */
  maxDelaySeconds: number;
  /** A key without a failure for this long starts afresh (and its row is swept). */
  forgetSeconds: number;
}

export type SignInResult =
  { ok: true; user: SessionUser } | { ok: false; reason: 'invalid' | 'disabled' } | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

class Throttled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('throttled');
  }
}

const normalizeEmail = (email: string) => email.trim().toLowerCase().slice(0, 320);

/**
 * Counts one attempt against each key, in one transaction, unless a key is inside its delay: then
 * nothing is counted and the attempt is refused with the seconds left. Counting happens BEFORE the
 * password is checked and the row lock serializes concurrent attempts of a key, so a burst of
 * parallel guesses gets exactly the free failures checked, never more. Keys are taken in the
 * order given (client first), the same for every attempt, so they cannot deadlock.
 */
async function admit(db: DbOrTx, keys: { key: string; free: number }[], policy: SignInPolicy): Promise<Throttled | undefined> {
  const forget = `${policy.forgetSeconds} seconds`;
  try {
    await db.transaction(async (tx) => {
      for (const { key, free } of keys) {
        await tx.execute(sql`insert into sign_in_throttle (key, failures, last_failure_at) values (${key}, 0, now()) on conflict (key) do nothing`);
        const counted = await tx.execute(sql`
          with n as (
            select case when last_failure_at < now() - ${forget}::interval then 1 else failures + 1 end as failures
            from sign_in_throttle where key = ${key})
          update sign_in_throttle t
             set failures = n.failures,
                 last_failure_at = now(),
                 blocked_until = case when n.failures >= ${free}
                   then now() + least(${policy.maxDelaySeconds}, power(2, least(n.failures - ${free}, 30))) * interval '1 second' end
            from n
           where t.key = ${key} and (t.blocked_until is null or t.blocked_until <= now())
          returning t.failures`);
        if (counted.length === 0) {
          const [row] = await query(
            tx,
            sql`select greatest(1, ceil(extract(epoch from blocked_until - now())))::int as wait from sign_in_throttle where key = ${key}`,
            z.object({ wait: z.number() }),
          );
          throw new Throttled(row?.wait ?? 1);
        }
      }
    });
  } catch (e) {
    if (e instanceof Throttled) return e;
    throw e;
  }
  return undefined;
}

/**
 * One row per account and hour: `failures` (password checked and wrong) or `refused` (not checked,
 * the client was throttled). E-mails that match no user share the account ''.
 */
async function auditFailure(db: DbOrTx, email: string, client: string, kind: 'failures' | 'refused') {
  const column = sql.raw(kind);
  await db.execute(sql`
    insert into sign_in_failures (account, window_start, user_id, ${column}, last_client)
    select coalesce(u.email, ''), date_trunc('hour', now()), u.id, 1, ${client}
      from (select 1) one left join users u on u.email = ${email}
    on conflict (account, window_start) do update
       set ${column} = sign_in_failures.${column} + 1, last_client = excluded.last_client, last_at = now(),
           user_id = coalesce(excluded.user_id, sign_in_failures.user_id)`);
}

/** Throttle rows idle past the forget period, a bounded batch at a time (each attempt sweeps more rows than it may add). */
async function sweep(db: DbOrTx, policy: SignInPolicy) {
  await db.execute(sql`
    delete from sign_in_throttle where key in (
      select key from sign_in_throttle
       where last_failure_at < now() - ${`${policy.forgetSeconds} seconds`}::interval and (blocked_until is null or blocked_until < now())
       limit 100)`);
}

/**
 * Checks e-mail and password for a sign-in from `client` (the address resolved through trusted
 * proxies). A throttled attempt is refused without checking the password; an unknown e-mail is
 * throttled and answered exactly like a wrong password. A success clears the (client, account)
 * failures and does not count against the client; it records `auth.signIn`. Failures are audited
 * in `sign_in_failures`, aggregated per account and hour. A disabled account's holder, with the
 * right password, is told the account is disabled rather than that the password is wrong.
 */
export async function authenticate(db: DbOrTx, attempt: { email: string; password: string; client: string }, policy: SignInPolicy): Promise<SignInResult> {
  const email = normalizeEmail(attempt.email);
  const client = attempt.client.slice(0, 100);
  const clientKey = `client:${client}`;
  const accountKey = `account:${client} ${email}`;
  const refused = await admit(
    db,
    [
      { key: clientKey, free: policy.clientFreeFailures },
      { key: accountKey, free: policy.accountFreeFailures },
    ],
    policy,
  );
  if (refused) {
    await auditFailure(db, email, client, 'refused');
    return { ok: false, reason: 'throttled', retryAfterSeconds: refused.retryAfterSeconds };
  }
  const user = await findUserByEmail(db, email);
  const valid = user?.passwordHash
    ? await verifyPassword(attempt.password, user.passwordHash)
    : (await verifyPassword(attempt.password, await dummyPasswordHash()), false);
  if (valid && user?.disabledAt) {
    // Only the right password learns that the account is disabled (anyone else reads "invalid");
    // it is still a failed sign-in, throttled and audited as one.
    await auditFailure(db, email, client, 'failures');
    return { ok: false, reason: 'disabled' };
  }
  if (valid && user) {
    await db.execute(sql`delete from sign_in_throttle where key = ${accountKey}`);
    await db.execute(sql`
      update sign_in_throttle
         set failures = greatest(failures - 1, 0),
             blocked_until = case when failures - 1 >= ${policy.clientFreeFailures} then blocked_until end
       where key = ${clientKey}`);
    await recordEvent(db, {
      actor: { type: 'user', id: user.id, label: user.email },
      action: 'auth.signIn',
      objectType: 'user',
      objectId: user.id,
      objectName: user.email,
    });
    return { ok: true, user: { id: user.id, email: user.email, name: user.name, platformRoles: user.platformRoles } };
  }
  await auditFailure(db, email, client, 'failures');
  await sweep(db, policy);
  return { ok: false, reason: 'invalid' };
}
