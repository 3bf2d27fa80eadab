'use client';
import type { inferRouterOutputs } from '@trpc/server';
import { Button, Input, Select, TextLink, cx } from '@/components/ui/primitives';
import type { AppRouter } from '@/server/trpc/root';

export type Family = 'IPv4' | 'IPv6';

/** One requested interface as the form edits it (`key` tells rows apart while they are edited). */
export interface NicDraft {
  key: number;
  network: string;
  families: Family[];
  addressClasses: string;
}

type NetworkItem = inferRouterOutputs<AppRouter>['ipam']['networks']['list']['items'][number];

const MAX_INTERFACES = 4;

/**
 * The machine's network interfaces: per interface a network of the project, its families (only
 * those the network has a range for) and how many address classes; `error` is the interfaces'
 * share of a refusal (see request-errors.ts).
 */
export function InterfacesFieldset({
  project,
  interfaces,
  networkItems,
  networksLoaded,
  error,
  onChange,
}: {
  project: string;
  interfaces: NicDraft[];
  networkItems: NetworkItem[];
  /** Whether the project's networks are known (so "no networks yet" is true, not still loading). */
  networksLoaded: boolean;
  error: string | null;
  onChange: (interfaces: NicDraft[]) => void;
}) {
  // A key no row has: rows are told apart by it while they are edited and removed.
  const nextKey = Math.max(0, ...interfaces.map((n) => n.key)) + 1;
  const setNic = (key: number, patch: Partial<NicDraft>) => onChange(interfaces.map((n) => (n.key === key ? { ...n, ...patch } : n)));
  return (
    <fieldset className="space-y-2 rounded-md border border-slate-200 p-3" aria-describedby={error ? 'machine-interfaces-error' : undefined}>
      <legend className="px-1 text-sm font-medium text-slate-700">Network interfaces (optional)</legend>
      {interfaces.length === 0 && (
        <p className="text-xs text-slate-500">
          Without interfaces the machine gets no addresses from this project&apos;s networks. Each interface takes one IP claim per family and address class,
          released with the machine.
        </p>
      )}
      {interfaces.map((nic, i) => {
        const net = networkItems.find((n) => n.name === nic.network);
        const n = i + 1;
        return (
          <div
            key={nic.key}
            role="group"
            aria-label={`Interface ${n}`}
            className="grid items-end gap-2 rounded-md bg-slate-50 p-2 sm:grid-cols-[minmax(0,1fr)_auto_6rem_auto]"
          >
            <label className="flex flex-col gap-0.5 text-xs text-slate-600">
              Network
              <Select
                value={nic.network}
                onChange={(e) => {
                  const next = networkItems.find((x) => x.name === e.target.value);
                  const families = (['IPv4', 'IPv6'] as const).filter((f) => next?.utilization[f]);
                  setNic(nic.key, { network: e.target.value, families: families.length ? [families[0]] : [] });
                }}
                required
              >
                <option value="">Choose a network…</option>
                {networkItems.map((x) => (
                  <option key={x.id} value={x.name}>
                    {x.name}
                  </option>
                ))}
              </Select>
            </label>
            <fieldset className="flex flex-col gap-0.5 text-xs text-slate-600">
              <legend className="mb-0.5">Families</legend>
              <div className="flex gap-3 py-1.5">
                {(['IPv4', 'IPv6'] as const).map((f) => {
                  const offered = !net || Boolean(net.utilization[f]);
                  return (
                    <label
                      key={f}
                      className={cx('inline-flex items-center gap-1 text-sm', offered ? 'text-slate-800' : 'text-slate-500')}
                      title={offered ? undefined : `${nic.network} has no ${f} range`}
                    >
                      <input
                        type="checkbox"
                        checked={nic.families.includes(f)}
                        disabled={!offered}
                        onChange={(e) =>
                          setNic(nic.key, { families: e.target.checked ? ([...nic.families, f].sort() as Family[]) : nic.families.filter((x) => x !== f) })
                        }
                      />
                      {f}
                    </label>
                  );
                })}
              </div>
            </fieldset>
            <label className="flex flex-col gap-0.5 text-xs text-slate-600">
              Address classes
              <Input
                type="number"
                min={1}
                max={4}
                inputMode="numeric"
                value={nic.addressClasses}
                onChange={(e) => setNic(nic.key, { addressClasses: e.target.value })}
                required
              />
            </label>
            <Button
              type="button"
              variant="ghost"
              className="text-xs"
              aria-label={`Remove interface ${n}`}
              onClick={() => onChange(interfaces.filter((x) => x.key !== nic.key))}
            >
              Remove
            </Button>
          </div>
        );
      })}
      {error && (
        <p className="text-xs text-red-700" id="machine-interfaces-error" data-testid="machine-interfaces-error">
          {error}
        </p>
      )}
      <div className="flex flex-wrap items-center gap-2">
        <Button
          type="button"
          variant="secondary"
          className="text-xs"
          disabled={interfaces.length >= MAX_INTERFACES || (networksLoaded && networkItems.length === 0)}
          onClick={() => onChange([...interfaces, { key: nextKey, network: '', families: [], addressClasses: '1' }])}
        >
          Add interface
        </Button>
        {networksLoaded && networkItems.length === 0 && (
          <span className="text-xs text-slate-500">
            This project has no networks yet: <TextLink href={`/projects/${project}/networks`}>create one</TextLink> to give machines addresses.
          </span>
        )}
      </div>
    </fieldset>
  );
}
