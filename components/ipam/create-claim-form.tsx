'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldError, fieldMessage, invalidProps } from '@/components/ui/errors';
import { useDebounced } from '@/components/ui/hooks';
import { Alert, Button, Field, Input, Select } from '@/components/ui/primitives';
import type { PoolView } from '@/server/ipam/networks';
import type { ClaimPrefill } from './free-prefixes';
import { useInvalidateIpam } from './hooks';

interface Draft {
  name: string;
  family: 'IPv4' | 'IPv6';
  prefixLength: string;
  address: string;
  pool: string;
  reclaimPolicy: 'Delete' | 'Retain';
}

const fields = ['name', 'family', 'prefixLength', 'address', 'pool', 'reclaimPolicy'] as const;

/**
 * Where a claim without a pool lands first, as the server picks (server/ipam/claims.ts): a child
 * pool marked as the network's default, else a root pool. A child pool carved for a purpose only
 * takes claims that name it.
 */
function defaultPool(pools: PoolView[], family: 4 | 6, pool: string) {
  if (pool) return pools.find((p) => p.name === pool);
  const ofFamily = pools.filter((p) => p.family === family);
  return ofFamily.find((p) => p.isDefault) ?? ofFamily.find((p) => p.kind === 'Root');
}

/**
 * Creates an IP claim. While the form is filled in, the real allocator runs as a dry run (debounced)
 * and says which block the claim would get, or the coded reason it would fail. A `prefill` (a free
 * block chosen beside the map) pins the claim to that block in its pool.
 */
export function CreateClaimForm({ project, network, pools, prefill }: { project: string; network: string; pools: PoolView[]; prefill?: ClaimPrefill | null }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateIpam();
  const claimPools = pools.filter((p) => p.kind !== 'NodeBlock');
  const initialFamily = claimPools.some((p) => p.family === 4) || claimPools.length === 0 ? 'IPv4' : 'IPv6';
  const defaults: Draft = { name: '', family: initialFamily, prefixLength: '', address: '', pool: '', reclaimPolicy: 'Delete' };
  const [draft, setDraft] = useState<Draft>(defaults);
  const [created, setCreated] = useState<{ name: string; cidr: string; pool: string; isNew: boolean } | null>(null);
  // A new choice of free block replaces the address, pool and family (adjusted while rendering, not in an effect).
  const [applied, setApplied] = useState<number | null>(null);
  if (prefill && prefill.nonce !== applied) {
    setApplied(prefill.nonce);
    setDraft((d) => ({ ...d, family: prefill.family, address: prefill.cidr, pool: prefill.pool, prefixLength: '' }));
    setCreated(null);
  }
  // A change clears the last attempt's errors (they were about the old values) and its success note.
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    setCreated(null);
    if (create.error) create.reset();
  };

  const familyNumber = draft.family === 'IPv6' ? 6 : 4;
  const input = {
    project,
    network,
    name: draft.name.trim(),
    family: draft.family,
    prefixLength: draft.prefixLength.trim() === '' ? undefined : Number(draft.prefixLength),
    address: draft.address.trim() || undefined,
    pool: draft.pool || undefined,
    reclaimPolicy: draft.reclaimPolicy,
  };
  const settled = useDebounced(input, 300);
  const settling = JSON.stringify(settled) !== JSON.stringify(input);
  const preview = useQuery({ ...trpc.ipam.claims.preview.queryOptions(settled), enabled: settled.name !== '', retry: false, staleTime: 0 });

  const create = useMutation(
    trpc.ipam.claims.create.mutationOptions({
      onSuccess: (result) => {
        setCreated({ name: result.claim.name, cidr: result.claim.allocatedCidr, pool: result.claim.pool, isNew: result.created });
        // Back to the defaults for the next claim (a Retain chosen for this one is not silently kept).
        setDraft(defaults);
        void invalidate();
      },
    }),
  );
  const err = create.error;
  const unplaced = err && !fields.some((f) => fieldError(err, f));
  const target = defaultPool(claimPools, familyNumber, draft.pool);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate(input);
  }

  return (
    <form onSubmit={onSubmit} className="space-y-3" aria-label="Create claim">
      <Field
        label="Claim name"
        htmlFor="claim-name"
        error={fieldMessage(err, 'name')}
        hint="The idempotency key: the same name and spec returns the same claim"
      >
        <Input
          id="claim-name"
          value={draft.name}
          onChange={(e) => set({ name: e.target.value })}
          placeholder="web-frontend"
          required
          autoComplete="off"
          {...invalidProps(fieldMessage(err, 'name'), 'claim-name')}
        />
      </Field>
      <div className="grid grid-cols-2 gap-3">
        <Field label="Family" htmlFor="claim-family" error={fieldMessage(err, 'family')}>
          <Select id="claim-family" value={draft.family} onChange={(e) => set({ family: e.target.value as Draft['family'], pool: '' })}>
            <option value="IPv4">IPv4</option>
            <option value="IPv6">IPv6</option>
          </Select>
        </Field>
        <Field label="Prefix length" htmlFor="claim-prefix" error={fieldMessage(err, 'prefixLength')}>
          <Input
            id="claim-prefix"
            type="number"
            inputMode="numeric"
            min={0}
            max={familyNumber === 4 ? 32 : 128}
            value={draft.prefixLength}
            onChange={(e) => set({ prefixLength: e.target.value })}
            placeholder={target ? `${target.defaultPrefixLength} (pool default)` : 'pool default'}
            {...invalidProps(fieldMessage(err, 'prefixLength'), 'claim-prefix')}
          />
        </Field>
      </div>
      <Field label="Pinned address (optional)" htmlFor="claim-address" error={fieldMessage(err, 'address')} hint="An exact address or CIDR inside a pool">
        <Input
          id="claim-address"
          value={draft.address}
          onChange={(e) => set({ address: e.target.value })}
          placeholder={familyNumber === 4 ? '10.20.0.10' : '2001:db8:20::10'}
          autoComplete="off"
          spellCheck={false}
          className="font-mono"
          {...invalidProps(fieldMessage(err, 'address'), 'claim-address')}
        />
      </Field>
      <div className="grid grid-cols-2 gap-3">
        <Field label="Pool (optional)" htmlFor="claim-pool" error={fieldMessage(err, 'pool')}>
          <Select id="claim-pool" value={draft.pool} onChange={(e) => set({ pool: e.target.value })}>
            <option value="">Any {draft.family} pool</option>
            {claimPools
              .filter((p) => p.family === familyNumber)
              .map((p) => (
                <option key={p.id} value={p.name}>
                  {p.name} ({p.cidr})
                </option>
              ))}
          </Select>
        </Field>
        <Field
          label="Reclaim policy"
          htmlFor="claim-reclaim"
          error={fieldMessage(err, 'reclaimPolicy')}
          hint={draft.reclaimPolicy === 'Retain' ? 'Kept allocated after deletion' : 'Returned on deletion'}
        >
          <Select id="claim-reclaim" value={draft.reclaimPolicy} onChange={(e) => set({ reclaimPolicy: e.target.value as Draft['reclaimPolicy'] })}>
            <option value="Delete">Delete</option>
            <option value="Retain">Retain</option>
          </Select>
        </Field>
      </div>

      <div data-testid="claim-preview" aria-live="polite" className="min-h-14 rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm">
        <p className="mb-0.5 text-xs font-semibold uppercase tracking-wide text-slate-500">Preview</p>
        {input.name === '' ? (
          <p className="text-slate-500">Type a claim name to see the block it would get.</p>
        ) : settling || preview.isFetching ? (
          <p className="text-slate-500">Checking…</p>
        ) : preview.error ? (
          <p className="text-red-800">{errorMessage(preview.error)}</p>
        ) : preview.data ? (
          <p className="text-slate-800">
            Would get{' '}
            <code className="rounded bg-white px-1 font-mono font-semibold text-brand-700 ring-1 ring-slate-200">{preview.data.claim.allocatedCidr}</code> from
            pool <strong>{preview.data.claim.pool}</strong>: <span data-testid="claim-preview-reason">{preview.data.poolReason}</span>.
          </p>
        ) : null}
      </div>

      {unplaced && <Alert testId="create-claim-error">{errorMessage(err)}</Alert>}
      {created && (
        <Alert tone="green" testId="claim-created">
          Claim <strong>{created.name}</strong> {created.isNew ? 'bound to' : 'already existed with this spec:'}{' '}
          <code className="font-mono">{created.cidr}</code> from pool {created.pool}.
        </Alert>
      )}
      <Button type="submit" disabled={create.isPending} className="w-full">
        {create.isPending ? 'Creating…' : 'Create claim'}
      </Button>
    </form>
  );
}
