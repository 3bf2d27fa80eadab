/**
 * The plugin executable is self-contained: an ELF file that needs no shared library beyond glibc's
 * (`ldd`) and runs with nothing on the PATH — no Node.js, no npm on the node.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginExecutable } from './test-support/plugin-executable';
import { runPlugin } from './test-support/run-plugin';

const exec = promisify(execFile);
let dir = '';
let plugin = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-ipam-exe-'));
  plugin = await pluginExecutable(path.join(dir, 'bin'));
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** glibc's libraries, the loader and the kernel's vDSO: what every glibc program has. */
const GLIBC = /^(linux-vdso\.so\.1|linux-gate\.so\.1|ld-linux[-\w.]*\.so\.\d|lib(c|m|dl|pthread|rt|util|resolv)\.so\.\d+)$/;

describe('the meridian-ipam executable', () => {
  it('is an ELF executable, not a script for an interpreter', async () => {
    const fh = await open(plugin, 'r');
    try {
      const { buffer } = await fh.read(Buffer.alloc(4), 0, 4, 0);
      expect(buffer.toString('latin1')).toBe('\x7fELF');
    } finally {
      await fh.close();
    }
  });

  it('needs no shared library beyond glibc', async () => {
    const { stdout } = await exec('ldd', [plugin]);
    const libraries = stdout
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[0])
      .filter(Boolean)
      .map((l) => path.basename(l));
    expect(libraries.length).toBeGreaterThan(0);
    expect(libraries.filter((l) => !GLIBC.test(l))).toEqual([]);
  });

  it('runs with an empty PATH (no interpreter to find on the node)', async () => {
    const r = await runPlugin(plugin, { env: { PATH: '', CNI_COMMAND: 'VERSION' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });
});
