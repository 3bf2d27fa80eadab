import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { testDb, uniq } from '@/test/db';
import { clientAddress } from '@/server/http/client-address';
import { parseTrustedProxies } from '@/lib/trusted-proxies';
import { makeUser } from '@/test/fixtures';
import { authenticate, type SignInPolicy } from './sign-in';

const policy: SignInPolicy = { accountFreeFailures: 3, clientFreeFailures: 10, maxDelaySeconds: 60, forgetSeconds: 3600 };
const password = 'correct horse battery';

/** A client address of its own per test (documentation ranges), so tests never share throttle keys. */
const client = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}-${uniq('c')}`;

/** Lets the key's current delay run out, as waiting would (no sleeping in tests). */
async function delayElapses(key: string) {
  await testDb().db.execute(sql`update sign_in_throttle set blocked_until = now() where key = ${key}`);
}

describe('sign-in throttling', () => {
  test('a client guessing at an account is throttled, but the right password from another client still signs in', async () => {
    const { db } = testDb();
    const admin = await makeUser(db, { password, platformRoles: ['admin'] });
    const attacker = client();
    for (let i = 0; i < policy.accountFreeFailures; i++) {
      expect(await authenticate(db, { email: admin.email, password: 'wrong', client: attacker }, policy)).toEqual({ ok: false, reason: 'invalid' });
    }
    // The attacker is now held off, even with the right password…
    expect(await authenticate(db, { email: admin.email, password, client: attacker }, policy)).toMatchObject({ ok: false, reason: 'throttled' });
    // …while the account's owner, elsewhere, signs in at once.
    expect(await authenticate(db, { email: admin.email, password, client: client() }, policy)).toMatchObject({ ok: true, user: { id: admin.id } });
  });

  test('delays grow with each further failure, and a success from that client clears them', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const from = client();
    const key = `account:${from} ${user.email}`;
    for (let i = 0; i < policy.accountFreeFailures; i++) await authenticate(db, { email: user.email, password: 'wrong', client: from }, policy);
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const refused = await authenticate(db, { email: user.email, password: 'wrong', client: from }, policy);
      expect(refused).toMatchObject({ ok: false, reason: 'throttled' });
      delays.push((refused as { retryAfterSeconds: number }).retryAfterSeconds);
      await delayElapses(key);
      expect(await authenticate(db, { email: user.email, password: 'wrong', client: from }, policy)).toEqual({ ok: false, reason: 'invalid' });
    }
    expect(delays).toEqual([1, 2, 4, 8]);
    await delayElapses(key);
    expect(await authenticate(db, { email: user.email, password, client: from }, policy)).toMatchObject({ ok: true });
    expect(await authenticate(db, { email: user.email, password: 'wrong', client: from }, policy)).toEqual({ ok: false, reason: 'invalid' });
  });

  test('the delay is capped', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const from = client();
    const capped = { ...policy, accountFreeFailures: 1, maxDelaySeconds: 5 };
    for (let i = 0; i < 6; i++) {
      await authenticate(db, { email: user.email, password: 'wrong', client: from }, capped);
      await delayElapses(`account:${from} ${user.email}`);
    }
    await authenticate(db, { email: user.email, password: 'wrong', client: from }, capped);
    expect(await authenticate(db, { email: user.email, password, client: from }, capped)).toEqual({ ok: false, reason: 'throttled', retryAfterSeconds: 5 });
  });

  test('X-Forwarded-For is ignored unless it comes from a trusted proxy', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const peer = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    // No trusted proxy: a client writing a new X-Forwarded-For on every try is still one client.
    const untrusted = parseTrustedProxies('');
    for (let i = 0; i < policy.accountFreeFailures; i++) {
      await authenticate(db, { email: user.email, password: 'wrong', client: clientAddress(peer, `198.51.100.${i + 1}`, untrusted) }, policy);
    }
    expect(await authenticate(db, { email: user.email, password, client: clientAddress(peer, '198.51.100.99', untrusted) }, policy)).toMatchObject({
      reason: 'throttled',
    });
    // Behind a trusted proxy, the clients it names are told apart: another one signs in.
    const proxy = parseTrustedProxies(peer);
    expect(await authenticate(db, { email: user.email, password, client: clientAddress(peer, '198.51.100.99', proxy) }, policy)).toMatchObject({ ok: true });
  });

  test('one client spraying across accounts is throttled as a client, for every account', async () => {
    const { db } = testDb();
    const victim = await makeUser(db, { password });
    const sprayer = client();
    const spray = { ...policy, clientFreeFailures: 5 };
    for (let i = 0; i < spray.clientFreeFailures; i++) {
      expect(await authenticate(db, { email: `${uniq('nobody')}@example.com`, password: 'x', client: sprayer }, spray)).toEqual({
        ok: false,
        reason: 'invalid',
      });
    }
    expect(await authenticate(db, { email: victim.email, password, client: sprayer }, spray)).toMatchObject({ ok: false, reason: 'throttled' });
    expect(await authenticate(db, { email: victim.email, password, client: client() }, spray)).toMatchObject({ ok: true });
  });

  test('concurrent guesses from one client get exactly the free failures checked, the rest refused unchecked', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const from = client();
    const results = await Promise.all(Array.from({ length: 20 }, () => authenticate(db, { email: user.email, password: 'wrong', client: from }, policy)));
    expect(results.filter((r) => !r.ok && r.reason === 'invalid')).toHaveLength(policy.accountFreeFailures);
    expect(results.filter((r) => !r.ok && r.reason === 'throttled')).toHaveLength(20 - policy.accountFreeFailures);
    expect(await authenticate(db, { email: user.email, password, client: client() }, policy)).toMatchObject({ ok: true });
  });

  test('a disabled account is named as disabled only to the right password', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    await db.execute(sql`update users set disabled_at = now() where id = ${user.id}`);
    const from = client();
    expect(await authenticate(db, { email: user.email, password: 'wrong', client: from }, policy)).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(db, { email: user.email, password, client: from }, policy)).toEqual({ ok: false, reason: 'disabled' });
  });

  test('unknown users look exactly like wrong passwords, throttling included', async () => {
    const { db } = testDb();
    const from = client();
    const email = `${uniq('nobody')}@example.com`;
    for (let i = 0; i < policy.accountFreeFailures; i++)
      expect(await authenticate(db, { email, password: 'x', client: from }, policy)).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(db, { email, password: 'x', client: from }, policy)).toMatchObject({ ok: false, reason: 'throttled' });
  });

  test('the audit of failed sign-ins is one row per account and hour, however many tries', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const count = async (q: ReturnType<typeof sql>) => ((await db.execute(q)) as unknown as { n: number }[])[0].n;
    const failedEventsBefore = await count(sql`select count(*)::int as n from events where action = 'auth.signIn.failed'`);
    const unknownBefore = await count(sql`select coalesce(sum(failures + refused), 0)::int as n from sign_in_failures where account = ''`);
    const tries = 12;
    await Promise.all(
      Array.from({ length: tries }, (_, i) => authenticate(db, { email: user.email, password: 'wrong', client: `203.0.113.${i + 1}` }, policy)),
    );
    await Promise.all(
      Array.from({ length: tries }, (_, i) =>
        authenticate(db, { email: `${uniq('made-up')}@example.com`, password: 'x', client: `203.0.113.${i + 1}` }, policy),
      ),
    );
    const rows = (await db.execute(
      sql`select account, user_id, failures, refused, last_client from sign_in_failures where account = ${user.email}`,
    )) as unknown as {
      user_id: string;
      failures: number;
      refused: number;
    }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_id: user.id });
    expect(rows[0].failures + rows[0].refused).toBe(tries);
    // Made-up e-mails share one row per hour: they cannot grow the audit.
    expect(await count(sql`select count(*)::int as n from sign_in_failures where account = '' and window_start = date_trunc('hour', now())`)).toBe(1);
    expect(await count(sql`select coalesce(sum(failures + refused), 0)::int as n from sign_in_failures where account = ''`)).toBe(unknownBefore + tries);
    // No append-only row per try.
    expect(await count(sql`select count(*)::int as n from events where action = 'auth.signIn.failed'`)).toBe(failedEventsBefore);
  });

  test('throttle state of idle keys is swept', async () => {
    const { db } = testDb();
    const from = client();
    await authenticate(db, { email: `${uniq('idle')}@example.com`, password: 'x', client: from }, policy);
    await db.execute(sql`update sign_in_throttle set last_failure_at = now() - interval '2 hours' where key like ${`%${from}%`}`);
    await authenticate(db, { email: `${uniq('later')}@example.com`, password: 'x', client: client() }, policy);
    expect(((await db.execute(sql`select count(*)::int as n from sign_in_throttle where key like ${`%${from}%`}`)) as unknown as { n: number }[])[0].n).toBe(0);
  });
});
