/**
 * The plugin's own variables (cni/config.ts PLUGIN_VARIABLES) are validated by the invocations that
 * read them: an invalid value is CNI error 4 naming the variable, before any request is made.
 */
import { describe, expect, it } from 'vitest';
import { readQuiet } from './config';
import { run } from './main';

const conf = JSON.stringify({
  cniVersion: '1.1.0',
  name: 'pod-net',
  type: 'bridge',
  ipam: { type: 'meridian-ipam', serverUrl: 'http://127.0.0.1:1', tokenFile: '/nonexistent/token', cluster: 'k1', timeoutMs: 500 },
});

/** Variables as the plugin reads them (a process environment). */
const vars = (values: Record<string, string>) => values as unknown as NodeJS.ProcessEnv;

const env = (command: string, extra: Record<string, string> = {}) =>
  vars({
    CNI_COMMAND: command,
    CNI_CONTAINERID: 'c0ffee01',
    CNI_NETNS: '/var/run/netns/none',
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
    ...extra,
  });

describe('MERIDIAN_CNI_QUIET', () => {
  it('is 1 (quiet), or 0 or unset (log lines on stderr)', () => {
    expect(readQuiet(vars({}))).toBe(false);
    expect(readQuiet(vars({ MERIDIAN_CNI_QUIET: '' }))).toBe(false);
    expect(readQuiet(vars({ MERIDIAN_CNI_QUIET: '0' }))).toBe(false);
    expect(readQuiet(vars({ MERIDIAN_CNI_QUIET: '1' }))).toBe(true);
  });

  it.each(['ADD', 'DEL', 'CHECK', 'GC', 'STATUS'])('any other value fails %s with code 4 naming it, before any request', async (command) => {
    const { stdout, status } = await run(env(command, { MERIDIAN_CNI_QUIET: 'yes' }), async () => conf);
    expect(status).toBe(1);
    const json = JSON.parse(stdout) as { code: number; msg: string; details?: string };
    expect(json.code).toBe(4);
    expect(json.msg).toBe('invalid environment variable MERIDIAN_CNI_QUIET: must be 1 (no log lines) or 0 (got "yes")');
    expect(json.details).toBe('variable: MERIDIAN_CNI_QUIET');
  });

  it('VERSION does not read it', async () => {
    const { stdout, status } = await run(env('VERSION', { MERIDIAN_CNI_QUIET: 'yes' }), async () => conf);
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ cniVersion: '1.1.0' });
  });
});

describe('MERIDIAN_NODE_NAME', () => {
  it.each(['ADD', 'GC'])('an invalid name fails %s with code 4 naming it, before any request', async (command) => {
    const { stdout, status } = await run(env(command, { MERIDIAN_NODE_NAME: 'node/1', MERIDIAN_CNI_QUIET: '1' }), async () => conf);
    expect(status).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ code: 4, msg: 'invalid environment variable MERIDIAN_NODE_NAME: "node/1" is not a node name' });
  });
});
