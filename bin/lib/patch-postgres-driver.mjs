/**
 * npm's postinstall: guards the `postgres` driver (pinned in package.json) against a connection that
 * closes while a small write is still scheduled (porsager/postgres#1154, #1208): its `nextWrite` runs
 * from a setImmediate after `closed()` has set the socket to null and throws an uncatchable TypeError
 * that ends the process (seen when a database primary dies under load). Patched: such a write fails
 * its queries with CONNECTION_CLOSED instead, and `closed()` forgets the scheduled write so that the
 * reconnected connection can write again. Idempotent; fails the install if the driver's text is not
 * the one this patch was written for (a new driver version must be checked by hand).
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MARK = '/* meridian: closed-socket write guard */';
const edits = [
  [
    '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
    `  function nextWrite(fn) {\n    ${MARK}\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  [
    "    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)",
    "    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)",
  ],
];

for (const variant of ['src', 'cjs/src', 'cf/src']) {
  const file = path.join(root, 'node_modules', 'postgres', variant, 'connection.js');
  if (!existsSync(file)) continue;
  let text = readFileSync(file, 'utf8');
  if (text.includes(MARK)) continue;
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`${file}: the postgres driver's text differs from what bin/lib/patch-postgres-driver.mjs patches`);
    text = text.replace(from, to);
  }
  writeFileSync(file, text);
}
