/**
 * The bench's PostgreSQL CPU meter against a real server: backends that use CPU and exit while a
 * meter runs (as connections of other sessions do on a shared server, and autovacuum workers on
 * any) must never make a phase's CPU go down, nor go uncounted when they were the phase's own.
 */
import postgres from 'postgres';
import { readFileSync } from 'node:fs';
import { expect, inject, test } from 'vitest';
import { postgresCpuMeter, processCpuSeconds, serverCpuSeconds } from './harness';

const url = inject('databaseUrl');
const database = new URL(url).pathname.slice(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function backend() {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  const [{ pid }] = await client`select pg_backend_pid() as pid`;
  return { client, pid: Number(pid) };
}

/** Keeps the backend busy for a few hundred milliseconds of CPU. */
const burn = (client: postgres.Sql) => client`select count(*) from generate_series(1, 4000000)`;

test("a database's backends: one that ran before the meter and exits during it takes nothing away, one that starts and exits during it counts", async (ctx) => {
  const earlier = await backend();
  // The meters read the server's processes in /proc: a server on another host (or container) cannot be metered so.
  if (Number.isNaN(processCpuSeconds(earlier.pid))) {
    await earlier.client.end();
    ctx.skip();
  }
  await burn(earlier.client);
  expect(processCpuSeconds(earlier.pid)).toBeGreaterThan(0.05);
  const meter = postgresCpuMeter({ database }, 50);
  await earlier.client.end();
  await sleep(200);
  const during = await backend();
  await burn(during.client);
  const used = processCpuSeconds(during.pid);
  await sleep(200);
  await during.client.end();
  await sleep(100);
  const seconds = meter.seconds();
  meter.stop();
  expect(seconds).toBeGreaterThanOrEqual(used - 0.02);
});

test("a server's CPU keeps what its exited backends used (the postmaster's reaped children)", async (ctx) => {
  const first = await backend();
  if (Number.isNaN(processCpuSeconds(first.pid))) {
    await first.client.end();
    ctx.skip();
  }
  const postmasterPid = Number(readFileSync(`/proc/${first.pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  await first.client.end();
  const start = serverCpuSeconds(postmasterPid);
  const b = await backend();
  await burn(b.client);
  const used = processCpuSeconds(b.pid);
  await b.client.end();
  // The postmaster reaps it: a sum over live processes would have lost what it used.
  for (let i = 0; i < 50; i++) {
    try {
      readFileSync(`/proc/${b.pid}/stat`);
      await sleep(20);
    } catch {
      break;
    }
  }
  expect(used).toBeGreaterThan(0.05);
  expect(serverCpuSeconds(postmasterPid) - start).toBeGreaterThanOrEqual(used - 0.02);
});
