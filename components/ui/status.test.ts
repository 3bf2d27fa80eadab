import { describe, expect, it } from 'vitest';
import { deviceHealth, statusOf, statusTable, type StatusKind } from './status';

/** States that mean "cannot be used" or "went wrong": never green, whatever the page. */
const bad = /unavailable|failed|quarantined|exhausted|rejected|denied|not ready|over limit|at limit|unhealthy|not verified/i;
/** States that mean "fine as it is": always green. */
const good = ['Ready', 'Available', 'Healthy', 'Succeeded', 'Approved', 'Active'];

describe('statusTable', () => {
  const rows = Object.entries(statusTable).flatMap(([kind, states]) => Object.entries(states).map(([state, st]) => ({ kind, state, ...st })));

  it.each(rows)('$kind $state reads "$word" in $tone', ({ state, tone, word }) => {
    expect(word).not.toBe('');
    if (bad.test(word) || bad.test(state)) expect(tone).not.toBe('green');
    if (good.includes(state)) expect(tone).toBe('green');
  });

  it('one word means one colour across kinds', () => {
    const byWord = new Map<string, Set<string>>();
    for (const r of rows) byWord.set(r.word, (byWord.get(r.word) ?? new Set()).add(r.tone));
    // Bound is a phase on its way (blue) and a device in use (blue) alike; Pending is amber for machines and requests.
    for (const [word, tones] of byWord) expect([word, [...tones]]).toEqual([word, [[...tones][0]]]);
  });

  it('an unknown state is grey, in words', () => {
    expect(statusOf('machine' as StatusKind, 'SomethingNew')).toEqual({ tone: 'slate', word: 'Something new' });
  });
});

describe('deviceHealth', () => {
  it('never calls a quarantined device healthy', () => {
    expect(deviceHealth('Healthy', 'Quarantined')).toEqual({ tone: 'amber', word: 'Not verified' });
    expect(deviceHealth('Healthy', 'Available')).toEqual({ tone: 'green', word: 'Healthy' });
    expect(deviceHealth('Unhealthy', 'Bound').tone).toBe('red');
    expect(deviceHealth('PowerFault', 'Bound')).toEqual({ tone: 'red', word: 'Power fault' });
  });
});
