/**
 * Machine status text in the tenant's words. The reconciler and the provider write reasons for
 * operators ("cleanup outcome unknown (timeout); resolving by lookup, attempt 2", "cleanup of asset
 * dev-1 failed (cleanupFailAssets fault): … epoch 1 stays open"); a tenant gets a sentence about
 * their machine instead, while operators and the timeline's details keep the exact text.
 *
 * Each rule matches the start of a reason as server/fleet writes it (reconcile.ts, machines.ts,
 * operator.ts) or a provider error; the first that matches wins. Text no rule knows is shown as
 * written unless it carries operator vocabulary, which becomes a general sentence.
 */
const rules: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^waiting for capacity\b/i, () => 'Waiting for a machine of this class to become free in this location.'],
  [/^capacity was returned: binding/i, () => 'A machine became free: reserving it for you.'],
  [/^waiting: /i, () => 'Waiting until the location can take new machines again.'],
  [/^the project or class requires operator approval/i, () => 'Waiting for an operator to approve the request.'],
  [/^approved by (.+)$/i, (m) => `Approved by ${m[1]}.`],
  [/^binding /i, () => 'Reserving a machine for you.'],
  [/^bound to /i, () => 'A machine is reserved for you.'],
  [/^install outcome unknown\b/i, () => 'The installation is taking longer than usual: its result is being checked with the provider.'],
  [/^install failed\b/i, () => 'The installation failed. Release the machine to get its capacity, addresses and quota back.'],
  [/^installing /i, () => 'Installing the operating system.'],
  [/^installed /i, () => 'The operating system is installed: the machine is ready.'],
  [/^cleanup outcome unknown\b/i, () => 'Wiping the machine is taking longer than usual: its result is being checked with the provider.'],
  [/^cleaning /i, () => 'Wiping the machine before it is returned.'],
  [/^released; capacity verified clean/i, () => 'Released: the machine was wiped and returned.'],
  [
    /^released; capacity quarantined/i,
    () => 'Released. The wipe could not be confirmed, so the hardware is set aside (quarantined) for an operator to check; nothing more is needed from you.',
  ],
  [/^cleanup of epoch \d+ verified/i, () => 'The machine was wiped and the wipe was verified.'],
  [/cleanupFailAssets|stays open|^cleanup failed\b|cleanup .*failed/i, () => 'Wiping the machine failed at the provider: an operator will check the hardware.'],
  [/^deleted after failing/i, () => 'Released after it failed.'],
  [/^force released: (.+)$/i, (m) => `An operator released the machine: ${m[1]}`],
];

/** Words only operators use: text containing them is not shown to tenants as written. */
const operatorVocabulary = /\b(epoch|fencing|fault|lookup|asset|reconcil\w*|verification|Injected\w*|[a-z]+[A-Z]\w*Fault)\b|resolving /i;

/** The tenant's sentence for a machine reason (null stays null). */
export function plainReason(text: string | null | undefined): string | null {
  if (text == null || text === '') return null;
  const t = text.trim();
  for (const [pattern, say] of rules) {
    const m = pattern.exec(t);
    if (m) return sentence(say(m));
  }
  if (operatorVocabulary.test(t)) return 'The provider reported a problem: an operator has been told.';
  return t;
}

function sentence(t: string) {
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?…]$/.test(s) ? s : `${s}.`;
}
