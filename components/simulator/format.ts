import { statusOf, type Tone } from '@/components/ui/status';
import type { FaultName, LogEntry } from '@/lib/provider-wire';

/** Short, human names of the faults, as the switches and the log show them. */
export const faultLabels: Record<FaultName, string> = {
  loseResponses: 'response lost',
  failOperations: 'injected failure',
  latencyMs: 'latency',
  hang: 'hang',
  unavailable: 'unavailable',
  cleanupFailAssets: 'cleanup failure',
  crash: 'crash',
};

/** `sha256:0123456789ab…` — enough to tell images apart in a table. */
export function shortDigest(digest: string | null | undefined): string {
  if (!digest) return '—';
  return digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
}

/** First 8 characters of an id (binding ids are usually uuids). */
export function shortId(id: string | null | undefined, length = 8): string {
  if (!id) return '—';
  return id.length > length + 1 ? `${id.slice(0, length)}…` : id;
}

/** `1 h 2 min`, `42 s`, … */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What the log row says happened, e.g. `operation submitted`, `fault set`. */
export function describeLogEvent(entry: LogEntry): string {
  return `${entry.type} ${entry.event}`;
}

export type { Tone };

/** An operation's result in the colour every other page gives it (components/ui/status.ts). */
export function resultTone(result: LogEntry['result'] | 'Running' | 'Succeeded' | 'Failed' | undefined): Tone {
  return result ? statusOf('operation', result).tone : 'slate';
}
