'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldError, fieldMessage, invalidProps } from '@/components/ui/errors';
import { Alert, Badge, Button, Field, Input, Select, cx } from '@/components/ui/primitives';
import type { PoolView } from '@/server/ipam/networks';
import { describeRules, familyLabel, poolKindName } from './format';
import { useInvalidateIpam } from './hooks';
import { Count, MiniBar } from './utilization';

/** Pools in tree order: each root followed by the pools carved from it, with their depth. */
function treeOrder(pools: PoolView[]) {
  const children = new Map<string | null, PoolView[]>();
  for (const p of pools) children.set(p.parentPoolId, [...(children.get(p.parentPoolId) ?? []), p]);
  const ids = new Set(pools.map((p) => p.id));
  const out: { pool: PoolView; depth: number }[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const p of children.get(parent) ?? []) {
      out.push({ pool: p, depth });
      walk(p.id, depth + 1);
    }
  };
  walk(null, 0);
  // Pools whose parent is not in the list (should not happen) still show, at the top level.
  for (const p of pools) if (p.parentPoolId && !ids.has(p.parentPoolId)) out.push({ pool: p, depth: 0 });
  return out;
}

/** The network's pools with rules and counters; "Show on map" selects one for the map. */
export function PoolsTable({ pools, selected, onShow }: { pools: PoolView[]; selected: string | undefined; onShow: (pool: string) => void }) {
  const rows = treeOrder(pools.filter((p) => p.kind !== 'NodeBlock'));
  return (
    <div className="overflow-x-auto">
      <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Pools">
        <thead>
          <tr>
            {['Pool', 'Kind', 'CIDR', 'Rules', 'Capacity', 'Allocated', 'Reserved', 'Available', 'Utilization', 'Phase'].map((h) => (
              <th key={h} scope="col" className="whitespace-nowrap px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map(({ pool: p, depth }) => (
            <tr key={p.id} className={cx(selected === p.name && 'bg-brand-50/60')}>
              <td className="whitespace-nowrap px-3 py-2" style={{ paddingLeft: `${0.75 + depth * 1.25}rem` }}>
                {depth > 0 && (
                  <span aria-hidden className="mr-1 text-slate-500">
                    ↳
                  </span>
                )}
                <button
                  type="button"
                  onClick={() => onShow(p.name)}
                  className="font-medium text-brand-600 hover:underline"
                  aria-label={`Show pool ${p.name} on the map`}
                >
                  {p.name}
                </button>
              </td>
              <td className="whitespace-nowrap px-3 py-2">
                <Badge tone={p.kind === 'Root' ? 'blue' : 'slate'}>{poolKindName(p.kind)}</Badge>{' '}
                {p.isDefault && (
                  <span title="Claims and pod blocks that name no pool come from this pool first">
                    <Badge tone="green">default</Badge>
                  </span>
                )}{' '}
                <span className="text-xs text-slate-500">{familyLabel(p.family)}</span>
              </td>
              <td className="px-3 py-2">
                <code className="font-mono text-xs text-slate-800">{p.cidr}</code>
              </td>
              <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600">
                {describeRules(p)[0]}
                <br />
                <span className="text-slate-500">{describeRules(p)[1]}</span>
              </td>
              <td className="px-3 py-2 text-right">
                <Count value={p.capacity} />
              </td>
              <td className="px-3 py-2 text-right">
                <Count value={p.allocated} />
              </td>
              <td className="px-3 py-2 text-right">
                <Count value={p.reserved} />
              </td>
              <td className="px-3 py-2 text-right">
                <Count value={p.available} />
              </td>
              <td className="px-3 py-2">
                <MiniBar label={`Pool ${p.name} utilization`} utilization={p.utilization} />
              </td>
              <td className="px-3 py-2">
                <StatusBadge kind="pool" state={p.phase} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const num = (v: FormDataEntryValue | null) => (v === null || String(v).trim() === '' ? undefined : Number(v));
/** A count of addresses goes as the digits typed: exact at IPv6 sizes, beyond what a JSON number holds. */
const count = (v: FormDataEntryValue | null) => (v === null || String(v).trim() === '' ? undefined : String(v).trim());
const carveFields = [
  'name',
  'parent',
  'cidr',
  'prefixLength',
  'pool.minPrefixLength',
  'pool.maxPrefixLength',
  'pool.defaultPrefixLength',
  'minPrefixLength',
  'maxPrefixLength',
  'defaultPrefixLength',
  'strategy',
  'reserveLeading',
  'reserveTrailing',
];

/** Carves a child pool out of a pool: an exact CIDR inside it, or a prefix length the parent chooses. */
export function CarvePoolForm({ project, network, pools }: { project: string; network: string; pools: PoolView[] }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateIpam();
  const parents = pools.filter((p) => p.kind !== 'NodeBlock');
  const [done, setDone] = useState<{ name: string; cidr: string } | null>(null);
  const create = useMutation(
    trpc.ipam.pools.create.mutationOptions({
      onSuccess: (pool) => {
        setDone({ name: pool.name, cidr: pool.cidr });
        void invalidate();
      },
    }),
  );
  const err = create.error;
  const fe = (f: string) => fieldMessage(err, f) ?? fieldMessage(err, `pool.${f}`);
  const unplaced = err && !carveFields.some((f) => fieldError(err, f));

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    setDone(null);
    const strategy = String(form.get('strategy') ?? '');
    create.mutate(
      {
        project,
        network,
        parent: String(form.get('parent') ?? ''),
        name: String(form.get('name') ?? '').trim(),
        cidr: String(form.get('cidr') ?? '').trim() || undefined,
        prefixLength: num(form.get('prefixLength')),
        minPrefixLength: num(form.get('minPrefixLength')),
        maxPrefixLength: num(form.get('maxPrefixLength')),
        defaultPrefixLength: num(form.get('defaultPrefixLength')),
        strategy: strategy === 'FirstFit' || strategy === 'BestFit' ? strategy : undefined,
        reserveLeading: count(form.get('reserveLeading')),
        reserveTrailing: count(form.get('reserveTrailing')),
        default: form.get('default') === 'on',
      },
      { onSuccess: () => formEl.reset() },
    );
  }

  return (
    <form onSubmit={onSubmit} aria-label="Carve a child pool" className="space-y-3">
      <div className="grid gap-3 md:grid-cols-4">
        <Field label="Parent pool" htmlFor="carve-parent" error={fe('parent')}>
          <Select id="carve-parent" name="parent" defaultValue={parents[0]?.name}>
            {parents.map((p) => (
              <option key={p.id} value={p.name}>
                {p.name} ({p.cidr})
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Pool name" htmlFor="carve-name" error={fe('name')}>
          <Input id="carve-name" name="name" placeholder="web-tier" required autoComplete="off" {...invalidProps(fe('name'), 'carve-name')} />
        </Field>
        <Field label="CIDR (optional)" htmlFor="carve-cidr" error={fe('cidr')} hint="Exact range inside the parent">
          <Input
            id="carve-cidr"
            name="cidr"
            placeholder="10.20.4.0/22"
            className="font-mono"
            autoComplete="off"
            spellCheck={false}
            {...invalidProps(fe('cidr'), 'carve-cidr')}
          />
        </Field>
        <Field label="or prefix length" htmlFor="carve-prefix" error={fe('prefixLength')} hint="The parent picks the block">
          <Input id="carve-prefix" name="prefixLength" type="number" min={0} max={128} placeholder="22" {...invalidProps(fe('prefixLength'), 'carve-prefix')} />
        </Field>
      </div>
      <div className="grid gap-3 md:grid-cols-6">
        <Field label="Min prefix" htmlFor="carve-min" error={fe('minPrefixLength')}>
          <Input id="carve-min" name="minPrefixLength" type="number" min={0} max={128} placeholder="auto" />
        </Field>
        <Field label="Max prefix" htmlFor="carve-max" error={fe('maxPrefixLength')}>
          <Input id="carve-max" name="maxPrefixLength" type="number" min={0} max={128} placeholder="auto" />
        </Field>
        <Field label="Default prefix" htmlFor="carve-default" error={fe('defaultPrefixLength')}>
          <Input id="carve-default" name="defaultPrefixLength" type="number" min={0} max={128} placeholder="auto" />
        </Field>
        <Field label="Strategy" htmlFor="carve-strategy" error={fe('strategy')}>
          <Select id="carve-strategy" name="strategy" defaultValue="">
            <option value="">FirstFit</option>
            <option value="BestFit">BestFit</option>
          </Select>
        </Field>
        <Field label="Reserve leading" htmlFor="carve-lead" error={fe('reserveLeading')}>
          <Input id="carve-lead" name="reserveLeading" type="text" inputMode="numeric" pattern="[0-9]*" placeholder="0" />
        </Field>
        <Field label="Reserve trailing" htmlFor="carve-trail" error={fe('reserveTrailing')}>
          <Input id="carve-trail" name="reserveTrailing" type="text" inputMode="numeric" pattern="[0-9]*" placeholder="0" />
        </Field>
      </div>
      <label className="flex items-start gap-2 text-sm text-slate-700">
        <input type="checkbox" name="default" className="mt-0.5" />
        <span>
          Default for this network: claims and pod blocks that name no pool come from it first. Leave unticked for a pool carved for a purpose, used only by
          claims that name it.
        </span>
      </label>
      {unplaced && <Alert testId="carve-error">{errorMessage(err)}</Alert>}
      {done && (
        <Alert tone="green" testId="carve-created">
          Pool <strong>{done.name}</strong> carved as <code className="font-mono">{done.cidr}</code>.
        </Alert>
      )}
      <Button type="submit" disabled={create.isPending || parents.length === 0}>
        {create.isPending ? 'Carving…' : 'Carve pool'}
      </Button>
    </form>
  );
}
