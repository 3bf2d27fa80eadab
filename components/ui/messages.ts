/**
 * Validation messages as sentences about the field, in the reader's terms. The server's messages
 * name the field by its input path and some are zod's defaults ("Too big: expected string to have
 * <=500 characters"); under a labelled input they read "Reason must have at most 500 characters."
 */

const rewrites: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^Too big: expected string to have <=\s*(\d+) characters?$/i, (m) => `must have at most ${Number(m[1]).toLocaleString('en-US')} characters`],
  [/^Too small: expected string to have >=\s*1 characters?$/i, () => 'is required'],
  [/^Too small: expected string to have >=\s*(\d+) characters?$/i, (m) => `must have at least ${Number(m[1]).toLocaleString('en-US')} characters`],
  [/^Too big: expected number to be <=\s*(\S+)$/i, (m) => `must be at most ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Too big: expected number to be <\s*(\S+)$/i, (m) => `must be less than ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Too small: expected number to be >=\s*(\S+)$/i, (m) => `must be at least ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Too small: expected number to be >\s*(\S+)$/i, (m) => `must be more than ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Too big: expected array to have <=\s*(\d+) items?$/i, (m) => `can have at most ${m[1]} entries`],
  [/^Too small: expected array to have >=\s*1 items?$/i, () => 'needs at least one entry'],
  [/^Invalid input: expected int, received number$/i, () => 'must be a whole number'],
  [/^Invalid input: expected number, received NaN$/i, () => 'must be a number'],
  [/^Invalid input: expected \w+, received undefined$/i, () => 'is required'],
  [/^Invalid input: expected (\w+), received (\w+)$/i, (m) => `must be a ${m[1] === 'int' ? 'whole number' : m[1]}`],
  [/^Invalid option: expected one of (.+)$/i, (m) => `must be one of ${m[1].replace(/\|/g, ', ').replace(/"/g, '')}`],
  [/^Invalid string: must match pattern .*$/i, () => 'is not in the expected form'],
  [/^Invalid (UUID|uuid)$/, () => 'is not a valid id'],
];

/** The field path some messages start with ("cidrs.1.cidr: …"), split off. */
function splitPath(message: string): { path: string | null; text: string } {
  const m = /^([A-Za-z_][\w]*(?:\.[\w]+)*): (.+)$/s.exec(message);
  return m ? { path: m[1], text: m[2] } : { path: null, text: message };
}

/** "cidrs.1.cidr" → "Cidr of entry 2 of cidrs"… kept short: the last named part, and the entry number. */
export function describePath(path: string): string {
  const parts = path.split('.');
  const index = [...parts].reverse().find((p) => /^\d+$/.test(p));
  const names = parts.filter((p) => !/^\d+$/.test(p));
  const name = (names[names.length - 1] ?? path).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const label = name === 'cidr' || name === 'cidrs' ? 'CIDR' : name.charAt(0).toUpperCase() + name.slice(1);
  return index !== undefined ? `${label} (entry ${Number(index) + 1})` : label;
}

const startsLikePredicate = /^(must|is|are|has|have|can|cannot|needs|should|may|does|overlaps|already|was)\b/;

/**
 * One sentence about a field: `label` and the message ("Reason must have at most 500 characters.").
 * A message that is already a sentence is kept, with its first letter capitalised and a full stop.
 */
export function fieldSentence(message: string, label?: string): string {
  const { path, text: raw } = splitPath(message.trim());
  let text = raw;
  for (const [pattern, rewrite] of rewrites) {
    const m = pattern.exec(text);
    if (m) {
      text = rewrite(m);
      break;
    }
  }
  const subject = label ?? (path ? describePath(path) : null);
  const sentence = subject && startsLikePredicate.test(text) ? `${subject} ${text}` : text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * Every error code a person can meet, as the sentence that opens its message ("Not enough quota.
 * Requested 1 IP claims, available 0."): the code itself is for the API and the logs.
 */
export const codeSentences: Record<string, string> = {
  ValidationFailed: 'Something in the form is not right.',
  Unauthenticated: 'Your session has ended.',
  Forbidden: 'You are not allowed to do this.',
  NotFound: 'It does not exist (any more).',
  Conflict: 'This clashes with something that already exists.',
  RateLimited: 'Too many attempts; wait a moment and try again.',
  PayloadTooLarge: 'That is too much at once.',
  InvalidCidr: 'That is not a valid address range.',
  PrefixLengthRejected: 'That block size is not allowed here.',
  NoOfferingPool: 'No pool of this network can give that.',
  Overlap: 'That range overlaps one already in use.',
  Exhausted: 'There is no free space of that size left.',
  ClaimExists: 'A claim with this name already exists.',
  AllocationRetained: 'This name still holds a kept address.',
  QuotaExceeded: 'Not enough quota.',
  PolicyFailed: 'A quota rule refused this.',
  Unavailable: 'A service this needs is not answering; try again shortly.',
  StaleEpoch: 'Someone else changed this machine first; reload and try again.',
  LocationUnavailable: 'That location cannot take machines now.',
  NoCapacity: 'No machine of that kind is free there.',
  InvalidTransition: 'The machine is not in a state that allows this.',
  CheckMismatch: 'The network does not match what was checked.',
  ProjectDeleting: 'The project is being deleted.',
  LastOwner: 'Someone must stay an owner.',
  LinkUnusable: 'This link can no longer be used.',
  DatabaseUnavailable: 'The database is not answering; try again shortly.',
  // Quota decisions in the claim log.
  QuotaAvailable: 'Granted.',
};

/** A code and its detail as sentences: the code's sentence, then the detail with a capital and a full stop. */
export function codeSentence(code: string, detail: string): string {
  const opening = codeSentences[code] ?? `${code.replace(/([a-z])([A-Z])/g, '$1 $2')}.`;
  const text = detail.trim();
  if (!text) return opening;
  return `${opening} ${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}
