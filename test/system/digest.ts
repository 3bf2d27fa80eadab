/**
 * A failed system test's digest, for the tail of a CI log (which shows only the last ~20 lines of
 * `npm test`): the seed, where the logs are, and what was wrong. bin/test.ts prints
 * `test-results/<stage>-digest.txt` after its summary when the stage failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './harness';

const MAX_VIOLATIONS = 10;
const MAX_LINE = 240;

/** Writes the digest of a failed run of `stage`: the `header` lines, then the violations (at most 10 lines, each cut to 240 characters). */
export function writeDigest(stage: string, header: string[], violations: string[]): void {
  const shown =
    violations.length > MAX_VIOLATIONS ? [...violations.slice(0, MAX_VIOLATIONS - 1), `… and ${violations.length - MAX_VIOLATIONS + 1} more`] : violations;
  const lines = [...header, ...(violations.length ? [`${stage}: ${violations.length} violation(s):`, ...shown] : [])].map((line) =>
    line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line,
  );
  const file = path.join(repositoryRoot, 'test-results', `${stage}-digest.txt`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** The first line of a failed test's first error (for the digest), e.g. `AssertionError: expected … to deeply equal []`. */
export function failureLine(errors: readonly { name?: string; message?: string }[] | undefined): string {
  const error = errors?.[0];
  return error ? `${error.name ?? 'Error'}: ${String(error.message).split('\n')[0]}` : 'failed';
}
