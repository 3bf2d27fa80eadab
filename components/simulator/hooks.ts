'use client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import type { LogEntry } from '@/lib/provider-wire';

/** How often the status header re-checks reachability (faster while a restart is in progress). */
export const STATUS_POLL_MS = 3_000;
export const RESTART_POLL_MS = 1_000;
/** The polling fallback of the live log (used only when the event stream cannot be used). */
export const LOG_POLL_MS = 2_000;
/** Entries kept in the page (the simulator keeps its own bounded log). */
const MAX_ENTRIES = 300;

export function useSimulatorStatus(fast: boolean) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.simulator.status.queryOptions(), refetchInterval: fast ? RESTART_POLL_MS : STATUS_POLL_MS });
}

/** Refetches everything the simulator page shows (after a change, or when the log says something happened). */
export function useInvalidateSimulator() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useCallback(
    () =>
      queryClient.invalidateQueries({
        queryKey: trpc.simulator.pathKey(),
        // The log has its own live feed; refetching it here would only duplicate work.
        predicate: (query) => (query.queryKey[0] as string[])[1] !== 'log',
      }),
    [queryClient, trpc],
  );
}

export type LiveMode = 'connecting' | 'live' | 'reconnecting' | 'polling';

/**
 * The simulator's operation log, newest first, kept live by the server-sent-events relay
 * (`/api/qa/simulator/log`); if the browser cannot keep an event stream open it falls back to polling
 * `simulator.log` every {@link LOG_POLL_MS} ms. `onActivity` runs (debounced) when entries arrive, so the
 * switches, counters and asset states follow the log without a manual refresh.
 */
export function useLiveLog(onActivity: () => void) {
  const trpc = useTRPC();
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [mode, setMode] = useState<LiveMode>('connecting');
  const [problem, setProblem] = useState<string | null>(null);
  const activity = useRef(onActivity);
  useEffect(() => {
    activity.current = onActivity;
  }, [onActivity]);
  const debounce = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const add = useCallback((incoming: LogEntry[]) => {
    if (incoming.length === 0) return;
    setEntries((current) => {
      const bySeq = new Map(current.map((e) => [e.seq, e]));
      for (const entry of incoming) bySeq.set(entry.seq, entry);
      return [...bySeq.values()].sort((a, b) => b.seq - a.seq).slice(0, MAX_ENTRIES);
    });
    clearTimeout(debounce.current);
    debounce.current = setTimeout(() => activity.current(), 250);
  }, []);

  useEffect(() => {
    if (typeof EventSource === 'undefined') {
      setMode('polling');
      return;
    }
    const source = new EventSource('/api/qa/simulator/log');
    source.addEventListener('live', () => {
      setMode('live');
      setProblem(null);
    });
    source.addEventListener('unavailable', (event) => {
      setMode('reconnecting');
      try {
        setProblem(String(JSON.parse((event as MessageEvent<string>).data).reason));
      } catch {
        setProblem('the simulator is unavailable');
      }
    });
    source.onmessage = (event: MessageEvent<string>) => add([JSON.parse(event.data) as LogEntry]);
    // CLOSED: the relay refused (e.g. not configured) and the browser will not retry — poll instead.
    source.onerror = () => setMode(source.readyState === EventSource.CLOSED ? 'polling' : 'reconnecting');
    return () => {
      source.close();
      clearTimeout(debounce.current);
    };
  }, [add]);

  const lastSeq = entries[0]?.seq;
  const poll = useQuery({
    ...trpc.simulator.log.queryOptions({ afterSeq: lastSeq, limit: 200 }),
    enabled: mode === 'polling',
    refetchInterval: LOG_POLL_MS,
  });
  useEffect(() => {
    if (poll.data) add(poll.data.items);
  }, [poll.data, add]);

  return { entries, mode, problem: mode === 'polling' && poll.error ? poll.error.message : problem };
}
