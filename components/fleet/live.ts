'use client';
import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';

/*
 * Live updates. The server announces committed changes (ids only) on GET /api/live as server-sent
 * events — cut from the change feed, one logical-decoding reader per web process (server/live,
 * server/changes/feed.ts). The views here turn each batch into React Query invalidations of the
 * queries it touches, so a page refetches when, and only when, something it shows changed. A slow
 * refetch stays as a safety net.
 */

/** Safety net only: notifications drive every refresh; this catches anything a reconnect missed. */
export const SAFETY_REFETCH_MS = 60_000;
/** At most one refetch of a query per this interval, however busy the fleet. */
const THROTTLE_MS = 500;
/** After the server refused the stream (e.g. the session expired), try again this much later. */
const REOPEN_AFTER_MS = 30_000;

export type LiveState = 'connecting' | 'live' | 'offline';
type Kind = 'machine' | 'allocation' | 'operation' | 'capacity' | 'network' | 'claim' | 'lease' | 'bucket' | 'quota' | 'invitation';
export type LiveScope = { project: string } | 'operator';

interface Listener {
  changes(kinds: Set<Kind>): void;
  resync(): void;
  state(state: LiveState): void;
}

interface Channel {
  url: string;
  source: EventSource | null;
  listeners: Set<Listener>;
  state: LiveState;
  reopen?: ReturnType<typeof setTimeout>;
}

/** One EventSource per URL, shared by every view on the page that follows it. */
const channels = new Map<string, Channel>();

function setState(channel: Channel, state: LiveState) {
  channel.state = state;
  for (const l of channel.listeners) l.state(state);
}

function open(channel: Channel) {
  const source = new EventSource(channel.url);
  channel.source = source;
  source.addEventListener('ready', () => {
    // Every `ready`, the first too: a change between the page's own read and the stream being ready
    // was announced to nobody (a machine requested and Ready within a second would stay shown as
    // Installing until the safety refetch), and after a reconnect anything may have been missed.
    for (const l of channel.listeners) l.resync();
    setState(channel, 'live');
  });
  source.addEventListener('resync', () => {
    for (const l of channel.listeners) l.resync();
  });
  source.onmessage = (event: MessageEvent<string>) => {
    let kinds: Set<Kind>;
    try {
      kinds = new Set((JSON.parse(event.data) as { changes: { k: Kind }[] }).changes.map((c) => c.k));
    } catch {
      return;
    }
    for (const l of channel.listeners) l.changes(kinds);
  };
  source.onerror = () => {
    setState(channel, 'offline');
    // The browser reconnects by itself after a dropped connection; a refused one (HTTP error) is
    // final for this EventSource, so open a new one later.
    if (source.readyState === EventSource.CLOSED && channel.listeners.size > 0) {
      channel.source = null;
      channel.reopen = setTimeout(() => open(channel), REOPEN_AFTER_MS);
    }
  };
}

function subscribe(url: string, listener: Listener): () => void {
  let channel = channels.get(url);
  if (!channel) {
    channel = { url, source: null, listeners: new Set(), state: 'connecting' };
    channels.set(url, channel);
    open(channel);
  }
  const c = channel;
  c.listeners.add(listener);
  listener.state(c.state);
  return () => {
    c.listeners.delete(listener);
    if (c.listeners.size === 0) {
      clearTimeout(c.reopen);
      c.source?.close();
      channels.delete(url);
    }
  };
}

/**
 * Follows `url`'s changes: invalidates the queries `keysFor` names for each kind of change,
 * throttled, and `everything` after a (re)connect. Returns the connection state.
 */
function useLive(url: string, keysFor: (kind: Kind) => QueryKey[], everything: QueryKey[]): LiveState {
  const queryClient = useQueryClient();
  const [state, setLiveState] = useState<LiveState>('connecting');
  // The callers' functions change identity on every render; the subscription follows the latest.
  const keys = useRef({ keysFor, everything });
  keys.current = { keysFor, everything };

  useEffect(() => {
    const pending = new Set<Kind>();
    let all = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const flush = () => {
      timer = undefined;
      last = Date.now();
      const list = all ? keys.current.everything : [...pending].flatMap((k) => keys.current.keysFor(k));
      pending.clear();
      all = false;
      const seen = new Set<string>();
      for (const queryKey of list) {
        const id = JSON.stringify(queryKey);
        if (seen.has(id)) continue;
        seen.add(id);
        void queryClient.invalidateQueries({ queryKey });
      }
    };
    const schedule = () => {
      timer ??= setTimeout(flush, Math.max(0, last + THROTTLE_MS - Date.now()));
    };
    const unsubscribe = subscribe(url, {
      changes(kinds) {
        for (const k of kinds) pending.add(k);
        schedule();
      },
      resync() {
        all = true;
        schedule();
      },
      state: setLiveState,
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [url, queryClient]);

  return state;
}

/**
 * Follows a project live on every page of it: claims, leases, networks, buckets, quota and
 * invitations as they change elsewhere (another browser, the REST API, kubectl, the CNI plugin, the
 * worker) — the pages refetch what a change touches within about a second.
 */
export function useProjectLive(project: string): LiveState {
  const trpc = useTRPC();
  const keysFor = (kind: Kind): QueryKey[] => {
    switch (kind) {
      case 'network':
      case 'claim':
        // A claim takes addresses from its network and quota from its project.
        return [trpc.ipam.pathKey(), trpc.quota.pathKey(), trpc.projects.pathKey()];
      case 'lease':
        return [trpc.cni.pathKey(), trpc.ipam.pathKey()];
      case 'bucket':
      case 'quota':
        return [trpc.quota.pathKey(), trpc.projects.pathKey()];
      case 'invitation':
        return [trpc.invitations.pathKey(), trpc.projects.pathKey()];
      default:
        // Machines have their own views (useFleetLive); the overview counts them.
        return [trpc.projects.pathKey()];
    }
  };
  return useLive(`/api/live?project=${encodeURIComponent(project)}`, keysFor, [
    trpc.ipam.pathKey(),
    trpc.quota.pathKey(),
    trpc.cni.pathKey(),
    trpc.invitations.pathKey(),
    trpc.projects.pathKey(),
  ]);
}

/**
 * Follows the fleet live for a project's pages (its machines) or the operators' (everything):
 * invalidates the queries each change touches, throttled, and everything fleet after a reconnect.
 * Returns the connection state for the page's indicator.
 */
export function useFleetLive(scope: LiveScope): LiveState {
  const trpc = useTRPC();
  const url = scope === 'operator' ? '/api/live' : `/api/live?project=${encodeURIComponent(scope.project)}`;
  const operator = scope === 'operator';
  const fleet = trpc.fleet;
  /** The queries a kind of change can affect, on this scope's pages. */
  const keysFor = (kind: Kind): QueryKey[] => {
    // A tenant's own machines moving changes its lists, its machine pages and the free counts it sees.
    if (!operator)
      return kind === 'machine' || kind === 'allocation' || kind === 'operation' || kind === 'capacity'
        ? [fleet.machines.pathKey(), fleet.catalogue.pathKey()]
        : [];
    switch (kind) {
      case 'machine':
        return [fleet.queue.pathKey(), fleet.allocations.pathKey(), fleet.machines.pathKey()];
      case 'allocation':
        return [fleet.allocations.pathKey(), fleet.capacity.pathKey(), fleet.inventory.pathKey()];
      case 'operation':
        return [fleet.operations.pathKey()];
      case 'capacity':
        // A retired device's operations leave the attention list.
        return [fleet.inventory.pathKey(), fleet.capacity.pathKey(), fleet.catalogue.pathKey(), fleet.queue.pathKey(), fleet.operations.pathKey()];
      default:
        return [];
    }
  };
  return useLive(url, keysFor, [fleet.pathKey()]);
}
