/**
 * The environment schema (lib/env-schema.ts): every variable declared once, validated with the variable
 * named, listed in docs/configuration.md's tables, and read nowhere else in the product's code.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { PLUGIN_VARIABLES } from '@/cni/config';
import { envSchema, EnvError, parseEnv } from '@/lib/env-schema';
import { cniAddLanes, env, ipamClaimLanes, overrideEnv } from './env';

const root = path.resolve(__dirname, '..');

describe('the environment schema', () => {
  test('an empty environment validates to the documented defaults', () => {
    const e = parseEnv({});
    expect(e).toMatchObject({
      DATA_DIR: '.data',
      PORT: 3000,
      CNI_BLOCK_GRACE_SECONDS: 300,
      CNI_GC_GRACE_SECONDS: 60,
      FLEET_EVIDENCE_MAX_AGE_SECONDS: 604_800,
      PROJECT_DELETION_RETRY_BASE_MS: 1_000,
      PROJECT_DELETION_RETRY_CAP_MS: 60_000,
      PROVIDER_TIMEOUT_MS: 5_000,
      PROVIDER_RETRY_CAP_MS: 30_000,
      RATE_LIMIT_TOKEN_RPS: 2_000,
      RATE_LIMIT_TOKEN_BURST: 4_000,
      MERIDIAN_DISABLED_MODULES: [],
      SIMULATOR_PORT: 4100,
      DB_POOL_SIZE: 10,
      LOG_LEVEL: 'info',
    });
    expect(e.DATABASE_URL).toBeUndefined();
    expect(e.SIMULATOR_URL).toBeUndefined();
  });

  test('values are parsed to their types; an empty value counts as unset', () => {
    const e = parseEnv({
      CNI_BLOCK_GRACE_SECONDS: '0',
      MERIDIAN_DISABLED_MODULES: ' ipam, quota ,',
      SIMULATOR_URL: 'http://127.0.0.1:4100',
      SIMULATOR_ASSETS: 'asset-1, asset-2',
      PORT: '',
      NOT_OURS: 'anything',
    });
    expect(e).toMatchObject({ CNI_BLOCK_GRACE_SECONDS: 0, MERIDIAN_DISABLED_MODULES: ['ipam', 'quota'], SIMULATOR_ASSETS: ['asset-1', 'asset-2'], PORT: 3000 });
    expect(e).not.toHaveProperty('NOT_OURS');
  });

  test.each([
    ['CNI_BLOCK_GRACE_SECONDS', 'abc', 'must be a whole number from 0 to 604800'],
    ['CNI_BLOCK_GRACE_SECONDS', '-1', 'must be a whole number'],
    ['CNI_GC_GRACE_SECONDS', '2.5', 'must be a whole number'],
    ['DB_POOL_SIZE', '0', 'must be at least 1'],
    ['DB_POOL_SIZE', 'ten', 'must be a whole number from 1 to 500'],
    ['PROVIDER_TIMEOUT_MS', '1e3', 'must be a whole number'],
    ['PROVIDER_RETRY_CAP_MS', ' 500', 'must be a whole number'],
    ['PROJECT_DELETION_RETRY_BASE_MS', '0', 'must be at least 1'],
    ['FLEET_EVIDENCE_MAX_AGE_SECONDS', 'a week', 'must be a whole number'],
    ['RATE_LIMIT_TOKEN_RPS', 'lots', 'must be a whole number'],
    ['WORKER_CONCURRENCY', '65', 'must be at most 64'],
    ['EMBEDDED_PG_PORT', '5432', 'must not be 5432'],
    ['MERIDIAN_DISABLED_MODULES', 'ipam,cni', 'unknown module "cni"'],
    ['SIMULATOR_URL', 'simulator:4100', 'must be an http:// or https:// URL'],
    ['SIMULATOR_ADMIN_TOKEN', 'short', 'must be at least 16 characters'],
    ['SPIFFE_TRUST_DOMAIN', 'Meridian Local', 'must be lowercase'],
    ['PROVIDER_TLS_CERT_FILE', '/etc/meridian/worker.crt', 'PROVIDER_TLS_KEY_FILE'],
    ['SIMULATOR_ADMIN_TOKEN', 'a token with spaces', 'must not contain whitespace'],
    ['SIMULATOR_PORT', 'eighty', 'must be a whole number'],
    ['CNI_ADD_LANES', '0', 'must be at least 1'],
    ['IPAM_CLAIM_LANES', '65', 'must be at most 64'],
    ['SIMULATOR_ASSETS', 'ok-asset,NOT OK', '"NOT OK"'],
    ['DATABASE_URL', 'mysql://db/meridian', 'must be a postgres:// URL'],
    ['LOG_LEVEL', 'verbose', ''],
    ['TRUSTED_PROXIES', '10.0.0.0/8,proxy.example.com', 'is not an IP address or CIDR'],
    ['AUTH_OIDC_ISSUER', 'ftp://id.example.com', 'must be an https:// URL'],
    ['AUTH_OIDC_ISSUER', 'http://id.example.com', 'must be an https:// URL (plain http:// only for a loopback host, with AUTH_OIDC_ALLOW_HTTP=1)'],
    ['AUTH_OIDC_ISSUER', 'http://127.0.0.1:9000', 'needs AUTH_OIDC_ALLOW_HTTP=1'],
    ['AUTH_OIDC_ALLOW_HTTP', 'yes', ''],
    ['HTTPS_PORT', '70000', 'must be at most 65535'],
    ['TLS_CERT_FILE', '/etc/meridian/tls.crt', 'needs TLS_PRIVATE_KEY_FILE too'],
    ['TLS_PRIVATE_KEY_FILE', '/etc/meridian/tls.key', 'needs TLS_CERT_FILE too'],
    ['REQUESTHEADER_ALLOWED_NAMES', 'front-proxy-client', 'needs REQUESTHEADER_CLIENT_CA_FILE'],
    ['REQUESTHEADER_USERNAME_HEADERS', 'X Remote User', 'must be HTTP header names'],
    ['AUTHORIZATION_WEBHOOK_CACHE_AUTHORIZED_TTL', '5 minutes', 'must be a duration'],
    ['AUTHORIZATION_WEBHOOK_CACHE_UNAUTHORIZED_TTL', '300', 'must be a duration'],
  ])('%s=%j is refused, naming the variable', (variable, value, reason) => {
    let error: unknown;
    try {
      parseEnv({ [variable]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvError);
    const problems = (error as EnvError).problems;
    expect(problems.map((p) => p.variable)).toEqual([variable]);
    expect(problems[0].message).toContain(reason);
    expect((error as EnvError).message).toContain(`${variable}: ${problems[0].message}`);
  });

  test('an OIDC issuer is https; plain http only for a loopback host, and only with AUTH_OIDC_ALLOW_HTTP=1', () => {
    expect(parseEnv({ AUTH_OIDC_ISSUER: 'https://id.example.com/realms/x' }).AUTH_OIDC_ISSUER).toBe('https://id.example.com/realms/x');
    for (const issuer of ['http://127.0.0.1:9000', 'http://127.0.0.2:9000', 'http://localhost:9000', 'http://[::1]:9000']) {
      expect(parseEnv({ AUTH_OIDC_ISSUER: issuer, AUTH_OIDC_ALLOW_HTTP: '1' }).AUTH_OIDC_ISSUER).toBe(issuer);
    }
    for (const issuer of ['http://id.example.com', 'http://10.0.0.5:9000', 'http://127.example.com']) {
      expect(() => parseEnv({ AUTH_OIDC_ISSUER: issuer, AUTH_OIDC_ALLOW_HTTP: '1' }), issuer).toThrow(/AUTH_OIDC_ISSUER: must be an https:\/\/ URL/);
    }
  });

  test('mail needs an smtp:// or smtps:// server, a From address and the console URL its links start with', () => {
    const ok = { SMTP_URL: 'smtps://user:pass@mail.example.com:465', SMTP_FROM: 'Meridian <noreply@example.com>', AUTH_URL: 'https://meridian.example.com' };
    expect(parseEnv(ok)).toMatchObject(ok);
    expect(() => parseEnv({ ...ok, SMTP_URL: 'https://mail.example.com' })).toThrow(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => parseEnv({ ...ok, SMTP_FROM: undefined })).toThrow(/SMTP_FROM: is required when SMTP_URL is set/);
    expect(() => parseEnv({ ...ok, AUTH_URL: undefined })).toThrow(/AUTH_URL: is required when SMTP_URL is set/);
    expect(() => parseEnv({ ...ok, SMTP_FROM: 'nobody' })).toThrow(/SMTP_FROM: must contain an e-mail address/);
  });

  test("CNI ADD lanes come from CNI_ADD_LANES, or from the main pool's size when it is unset", () => {
    const sizes: [string | undefined, string | undefined, number][] = [
      [undefined, undefined, 2],
      ['40', undefined, 8],
      ['3', undefined, 1],
      ['40', '3', 3],
    ];
    for (const [pool, lanes, expected] of sizes) {
      const restore = overrideEnv({ DB_POOL_SIZE: pool, CNI_ADD_LANES: lanes });
      try {
        expect(cniAddLanes(), `DB_POOL_SIZE=${pool} CNI_ADD_LANES=${lanes}`).toBe(expected);
      } finally {
        restore();
      }
    }
  });

  test("IP claim lanes come from IPAM_CLAIM_LANES, or from the main pool's size when it is unset", () => {
    const sizes: [string | undefined, string | undefined, number][] = [
      [undefined, undefined, 4],
      ['40', undefined, 16],
      ['2', undefined, 1],
      ['40', '3', 3],
    ];
    for (const [pool, lanes, expected] of sizes) {
      const restore = overrideEnv({ DB_POOL_SIZE: pool, IPAM_CLAIM_LANES: lanes });
      try {
        expect(ipamClaimLanes(), `DB_POOL_SIZE=${pool} IPAM_CLAIM_LANES=${lanes}`).toBe(expected);
      } finally {
        restore();
      }
    }
  });

  test('every invalid variable is named at once', () => {
    expect(() => parseEnv({ CNI_BLOCK_GRACE_SECONDS: 'abc', DB_POOL_SIZE: '0', LOG_LEVEL: 'loud' })).toThrow(EnvError);
    try {
      parseEnv({ CNI_BLOCK_GRACE_SECONDS: 'abc', DB_POOL_SIZE: '0', LOG_LEVEL: 'loud' });
    } catch (e) {
      expect((e as EnvError).problems.map((p) => p.variable).sort()).toEqual(['CNI_BLOCK_GRACE_SECONDS', 'DB_POOL_SIZE', 'LOG_LEVEL']);
    }
  });

  test('overrideEnv sets values for this process (validated) until restored', () => {
    const before = env().CNI_BLOCK_GRACE_SECONDS;
    expect(() => overrideEnv({ CNI_BLOCK_GRACE_SECONDS: 'abc' })).toThrow(/CNI_BLOCK_GRACE_SECONDS/);
    expect(env().CNI_BLOCK_GRACE_SECONDS).toBe(before);
    const restoreOuter = overrideEnv({ CNI_BLOCK_GRACE_SECONDS: '7' });
    const restoreInner = overrideEnv({ CNI_GC_GRACE_SECONDS: '0' });
    expect(env()).toMatchObject({ CNI_BLOCK_GRACE_SECONDS: 7, CNI_GC_GRACE_SECONDS: 0 });
    restoreInner();
    expect(env()).toMatchObject({ CNI_BLOCK_GRACE_SECONDS: 7, CNI_GC_GRACE_SECONDS: 60 });
    restoreOuter();
    expect(env().CNI_BLOCK_GRACE_SECONDS).toBe(before);
  });
});

/** The variable names in the first column of the tables of docs/configuration.md. */
async function documentedVariables(): Promise<string[]> {
  const reference = await readFile(path.join(root, 'docs', 'configuration.md'), 'utf8');
  const names: string[] = [];
  for (const line of reference.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split('|')[1];
    for (const m of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.push(m[1]);
  }
  return names;
}

describe('the configuration reference (docs/configuration.md)', () => {
  test("its tables list every variable of the schema and the CNI plugin's, and no other", async () => {
    const documented = await documentedVariables();
    const declared = [...Object.keys(envSchema.shape), ...PLUGIN_VARIABLES];
    expect(
      documented.filter((name, i) => documented.indexOf(name) !== i),
      'listed twice',
    ).toEqual([]);
    expect(
      declared.filter((name) => !documented.includes(name)),
      'declared but not in docs/configuration.md',
    ).toEqual([]);
    expect(
      documented.filter((name) => !declared.includes(name)),
      'in docs/configuration.md but not declared',
    ).toEqual([]);
  });
});

/** Source files of the product: everything but tests, test support and the bench. */
async function productFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'test-support') out.push(...(await productFiles(rel)));
    } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      out.push(rel);
    }
  }
  return out;
}

describe('reading the environment', () => {
  test('no product code reads a variable from process.env but server/env.ts', async () => {
    const files = (await Promise.all(['app', 'bin', 'cni', 'components', 'db', 'lib', 'server', 'simulator'].map(productFiles))).flat();
    const reads: string[] = [];
    for (const file of files) {
      if (file === path.join('server', 'env.ts')) continue;
      const lines = (await readFile(path.join(root, file), 'utf8')).split('\n');
      lines.forEach((line, i) => {
        // Passing the whole environment on (to a child process, to the CNI plugin's reader) is fine;
        // naming a variable is a read. Test runners' own variables (TEST_*) are not the product's.
        for (const m of line.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[)/g)) {
          if (m[1]?.startsWith('TEST_')) continue;
          reads.push(`${file}:${i + 1}: ${line.trim()}`);
        }
      });
    }
    expect(reads).toEqual([]);
  });
});
