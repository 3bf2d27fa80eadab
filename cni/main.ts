/**
 * `meridian-ipam`: a CNI IPAM plugin (spec 0.3.0–1.1.0) that delegates every pod address to
 * Meridian's lease API; run by cni/bin.ts, the entry of the executable bin/build-cni.ts compiles.
 *
 * Protocol: CNI_COMMAND and friends in the environment, the network configuration on stdin, the
 * result (ADD, VERSION) or an error `{ cniVersion, code, msg, details }` on stdout, exit status 0
 * on success and 1 on error, logs on stderr only.
 */
import { fstatSync, readFileSync } from 'node:fs';
import { cmdAdd, cmdCheck, cmdDel, cmdGc, cmdStatus } from './commands';
import { givenVersion, parseNetConf, peekVersion, readEnv, readQuiet } from './config';
import { CniError, ERR_INTERNAL, ERR_INVALID_ENV, ERR_IO } from './errors';
import { writeFd } from './io';
import { log, redact, setQuiet } from './log';
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from './version';

const COMMANDS = ['ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'VERSION'];

function stdinIsCharacterDevice(): boolean {
  try {
    return fstatSync(0).isCharacterDevice();
  } catch {
    return false; // no stdin at all: reading it fails below with code 5
  }
}

async function readStdin(): Promise<string> {
  // A terminal sends no configuration (someone ran the plugin by hand): do not wait for one. A
  // terminal is a character device (so is /dev/null, which holds nothing either). Not
  // process.stdin.isTTY: creating process.stdin would start reading fd 0 before readFileSync; not
  // node:tty, whose loading is a sizeable share of the compiled plugin's start-up.
  if (stdinIsCharacterDevice()) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A non-blocking pipe makes the synchronous read fail with EAGAIN: read it as a stream instead.
    if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') throw new CniError(ERR_IO, 'failed to read network config from stdin', (e as Error).message);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Runs one invocation; returns the text for stdout (possibly empty) and the exit status. `input`
 * reads the network configuration (stdin in the executable; tests pass the text in).
 */
export async function run(procEnv: NodeJS.ProcessEnv, input: () => Promise<string> = readStdin): Promise<{ stdout: string; status: number }> {
  const command = procEnv.CNI_COMMAND ?? '';
  let cniVersion = CURRENT_VERSION;
  const started = Date.now();
  try {
    if (command === 'VERSION') {
      // Spec "Version success": cniVersion is the one given on input (the runtime compares it with
      // supportedVersions itself); without one, this plugin's newest.
      return {
        stdout: JSON.stringify({ cniVersion: givenVersion(await input().catch(() => '')) ?? CURRENT_VERSION, supportedVersions: SUPPORTED_VERSIONS }),
        status: 0,
      };
    }
    setQuiet(false); // until MERIDIAN_CNI_QUIET is read: an invalid value is reported on stderr too
    setQuiet(readQuiet(procEnv));
    if (!COMMANDS.includes(command)) {
      if (!command)
        log(
          `CNI IPAM plugin for Meridian; CNI spec versions ${SUPPORTED_VERSIONS.join(', ')}; set CNI_COMMAND, or run "meridian-ipam install --help" to install it on a node`,
        );
      throw new CniError(
        ERR_INVALID_ENV,
        command ? `unknown CNI_COMMAND: ${command}` : 'required env variables [CNI_COMMAND] missing',
        'variable: CNI_COMMAND',
      );
    }
    // The config first: every error from here on is labelled with the request's cniVersion.
    const stdin = await input();
    cniVersion = peekVersion(stdin) ?? CURRENT_VERSION;
    const env = readEnv(command, procEnv);
    const conf = parseNetConf(stdin);
    switch (command) {
      case 'ADD':
        return { stdout: JSON.stringify(await cmdAdd(conf, env)), status: 0 };
      case 'DEL':
        await cmdDel(conf, env);
        break;
      case 'CHECK':
        await cmdCheck(conf, env);
        break;
      case 'GC':
        await cmdGc(conf, env);
        break;
      case 'STATUS':
        await cmdStatus(conf);
        break;
    }
    return { stdout: '', status: 0 };
  } catch (e) {
    const err =
      e instanceof CniError ? e : new CniError(ERR_INTERNAL, 'internal error in meridian-ipam', e instanceof Error ? (e.stack ?? e.message) : String(e));
    const msg = redact(err.msg);
    const details = err.details === undefined ? undefined : redact(err.details);
    log(`${command || '(no command)'} failed after ${Date.now() - started} ms: code ${err.code}: ${msg}${details ? ` — ${details}` : ''}`);
    const out: Record<string, unknown> = { cniVersion, code: err.code, msg };
    if (details !== undefined) out.details = details;
    return { stdout: JSON.stringify(out), status: 1 };
  }
}

/** The process entry: never throws, never writes anything but the JSON to stdout. */
export function main(): void {
  run(process.env).then(
    ({ stdout, status }) => {
      if (stdout) writeFd(1, stdout);
      process.exit(status);
    },
    (e: unknown) => {
      // Unreachable in practice (run() catches everything); still answer in the protocol.
      writeFd(1, JSON.stringify({ cniVersion: CURRENT_VERSION, code: ERR_INTERNAL, msg: 'internal error in meridian-ipam', details: redact(String(e)) }));
      process.exit(1);
    },
  );
}
