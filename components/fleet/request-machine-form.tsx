'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { fieldMessage, invalidProps } from '@/components/ipam/field-errors';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Field, Input, Select, TextLink, cx } from '@/components/ui/primitives';
import { AvailabilityMatrix } from './availability-matrix';
import type { Catalogue } from './format';
import { useInvalidateFleet } from './hooks';
import { networkChoicesInput } from './queries';

type Family = 'IPv4' | 'IPv6';
interface NicDraft {
  key: number;
  network: string;
  families: Family[];
  addressClasses: string;
}
interface Draft {
  name: string;
  class: string;
  profile: string;
  location: string;
  desiredPower: 'on' | 'off';
  interfaces: NicDraft[];
}

const MAX_INTERFACES = 4;

interface ErrorData {
  message: string;
  data?: { field?: string | null; domainCode?: string | null; fieldErrors?: Record<string, string[] | undefined> | null } | null;
}

/** Fields the IP claims made for interfaces report on (the claim's, not the machine's). */
const interfaceFields = new Set(['interfaces', 'network', 'family', 'families', 'addressClasses', 'prefixLength', 'pool', 'address']);

/**
 * An error from creating the interfaces' IP claims: reported by IPAM with the claim's field names
 * (`family`, `prefixLength`, or `name` for a clashing claim), so it belongs under Interfaces, not
 * under the machine's fields of the same name.
 */
function interfaceError(error: unknown): string | null {
  const e = error as ErrorData | null;
  if (!e?.data) return null;
  const zod = e.data.fieldErrors?.interfaces?.[0];
  if (zod) return zod;
  const code = e.data.domainCode;
  if ((e.data.field && interfaceFields.has(e.data.field)) || code === 'ClaimExists' || code === 'Exhausted' || code === 'NoOfferingPool' || /\bnetwork "/.test(e.message)) {
    return code ? `${code}: ${e.message}` : e.message;
  }
  return null;
}

function machineFieldError(error: unknown, field: string): string | null {
  return interfaceError(error) ? null : fieldMessage(error, field);
}

/** The first usable location with free capacity of the class (else the first usable one). */
function pickLocation(catalogue: Catalogue, cls: string): string {
  const usable = catalogue.locations.filter((l) => l.usable);
  return (usable.find((l) => (l.classes.find((c) => c.class === cls)?.free ?? 0) > 0) ?? usable[0] ?? catalogue.locations[0])?.location ?? '';
}

/**
 * Free counts move as other projects bind and release, and a tenant's live stream carries only its
 * own project's changes (capacity is fleet-wide), so the open form refetches the matrix on a timer;
 * the project's own machines moving refetch it at once (see live.ts).
 */
const CATALOGUE_REFRESH_MS = 10_000;

/**
 * Requests a machine. The availability matrix is live (refetched while the form is open) and shows
 * what the allocator would find: free machines per location and class, and locations that cannot
 * take machines with the reason. Server refusals land on their field — LocationUnavailable under
 * the location, quota with its numbers — and on success the machine's page opens to follow it.
 */
export function RequestMachineForm({ project, onCancel }: { project: string; onCancel?: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const invalidate = useInvalidateFleet();
  const catalogue = useQuery({ ...trpc.fleet.catalogue.queryOptions(), refetchInterval: CATALOGUE_REFRESH_MS });
  const networks = useQuery(trpc.ipam.networks.list.queryOptions(networkChoicesInput(project)));
  const [draft, setDraft] = useState<Draft | null>(null);
  const [nextKey, setNextKey] = useState(1);

  const create = useMutation(
    trpc.fleet.machines.create.mutationOptions({
      onSuccess: (machine) => {
        void invalidate();
        router.push(`/projects/${project}/machines/${machine.name}`);
      },
    }),
  );

  const cat = catalogue.data;
  if (catalogue.error) return <Alert testId="catalogue-error">{errorMessage(catalogue.error)}</Alert>;
  if (!cat) return <p className="text-sm text-slate-500">Loading the catalogue…</p>;
  if (cat.classes.length === 0 || cat.profiles.length === 0 || cat.locations.length === 0) {
    return <Alert tone="amber">The machine catalogue is empty: an operator must publish locations, classes and profiles first.</Alert>;
  }

  // Default to a class that needs no approval: the common case gets a machine without waiting for anyone.
  const initialClass = (cat.classes.find((c) => !c.requiresApproval) ?? cat.classes[0]).name;
  const d: Draft = draft ?? { name: '', class: initialClass, profile: cat.profiles[0].name, location: pickLocation(cat, initialClass), desiredPower: 'on', interfaces: [] };
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...d, ...patch });
    if (create.error) create.reset();
  };
  const setNic = (key: number, patch: Partial<NicDraft>) => set({ interfaces: d.interfaces.map((n) => (n.key === key ? { ...n, ...patch } : n)) });

  const err = create.error;
  const nicError = interfaceError(err);
  const placed = ['name', 'class', 'profile', 'location', 'desiredPower'].some((f) => machineFieldError(err, f)) || nicError !== null;
  const quota = err?.data?.domainCode === 'QuotaExceeded';

  const cls = cat.classes.find((c) => c.name === d.class);
  const loc = cat.locations.find((l) => l.location === d.location);
  const cell = loc?.classes.find((c) => c.class === d.class);
  const networkItems = networks.data?.items ?? [];
  const nicsIncomplete = d.interfaces.some((n) => !n.network || n.families.length === 0);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({
      project,
      name: d.name.trim(),
      class: d.class,
      profile: d.profile,
      location: d.location,
      desiredPower: d.desiredPower,
      interfaces: d.interfaces.map((n) => ({ network: n.network, families: n.families, addressClasses: Number(n.addressClasses) || 1 })),
    });
  }

  return (
    <form onSubmit={onSubmit} aria-label="Request a machine" className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,26rem)]">
      <div className="space-y-3">
        <Field label="Name" htmlFor="machine-name" error={machineFieldError(err, 'name')} hint="Lower-case letters, digits and dashes; unique in this project">
          <Input id="machine-name" value={d.name} onChange={(e) => set({ name: e.target.value })} placeholder="db-primary-1" required maxLength={63} autoComplete="off" spellCheck={false} {...invalidProps(machineFieldError(err, 'name'), 'machine-name')} />
        </Field>
        <div className="grid gap-3 sm:grid-cols-2">
          <Field
            label="Class"
            htmlFor="machine-class"
            error={machineFieldError(err, 'class')}
            hint={cls ? `${cls.cores} cores · ${cls.memoryGib} GiB · ${cls.arch}${cls.requiresApproval ? ' · needs operator approval' : ''}` : undefined}
          >
            <Select
              id="machine-class"
              value={d.class}
              onChange={(e) => {
                const next = e.target.value;
                const here = loc?.usable && (loc.classes.find((c) => c.class === next)?.free ?? 0) > 0;
                set({ class: next, location: here ? d.location : pickLocation(cat, next) });
              }}
              {...invalidProps(machineFieldError(err, 'class'), 'machine-class')}
            >
              {cat.classes.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name} — {c.cores} cores, {c.memoryGib} GiB, {c.arch}
                </option>
              ))}
            </Select>
          </Field>
          <Field
            label="Profile"
            htmlFor="machine-profile"
            error={machineFieldError(err, 'profile')}
            hint={<span className="font-mono">{cat.profiles.find((p) => p.name === d.profile)?.imageDigest.slice(0, 19)}…</span>}
          >
            <Select id="machine-profile" value={d.profile} onChange={(e) => set({ profile: e.target.value })} {...invalidProps(machineFieldError(err, 'profile'), 'machine-profile')}>
              {cat.profiles.map((p) => (
                <option key={p.name} value={p.name}>
                  {p.name}
                </option>
              ))}
            </Select>
          </Field>
        </div>
        <div className="grid gap-3 sm:grid-cols-2">
          <Field label="Location" htmlFor="machine-location" error={machineFieldError(err, 'location')}>
            <Select id="machine-location" value={d.location} onChange={(e) => set({ location: e.target.value })} {...invalidProps(machineFieldError(err, 'location'), 'machine-location')}>
              {cat.locations.map((l) => {
                const free = l.classes.find((c) => c.class === d.class)?.free ?? 0;
                return (
                  <option key={l.location} value={l.location} disabled={!l.usable}>
                    {l.location} ({l.displayName}) — {l.usable ? `${free} free` : `unavailable: ${l.reason}`}
                  </option>
                );
              })}
            </Select>
          </Field>
          <fieldset className="space-y-1">
            <legend className="block text-sm font-medium text-slate-700">Desired power</legend>
            <div className="flex gap-4 pt-1.5 text-sm">
              {(['on', 'off'] as const).map((p) => (
                <label key={p} className="inline-flex items-center gap-1.5">
                  <input type="radio" name="desired-power" value={p} checked={d.desiredPower === p} onChange={() => set({ desiredPower: p })} />
                  {p === 'on' ? 'On' : 'Off'}
                </label>
              ))}
            </div>
          </fieldset>
        </div>

        <fieldset className="space-y-2 rounded-md border border-slate-200 p-3" aria-describedby={nicError ? 'machine-interfaces-error' : undefined}>
          <legend className="px-1 text-sm font-medium text-slate-700">Network interfaces (optional)</legend>
          {d.interfaces.length === 0 && (
            <p className="text-xs text-slate-500">
              Without interfaces the machine gets no addresses from this project&apos;s networks. Each interface takes one IP claim per family and address class, released with the machine.
            </p>
          )}
          {d.interfaces.map((nic, i) => {
            const net = networkItems.find((n) => n.name === nic.network);
            const n = i + 1;
            return (
              <div key={nic.key} role="group" aria-label={`Interface ${n}`} className="grid items-end gap-2 rounded-md bg-slate-50 p-2 sm:grid-cols-[minmax(0,1fr)_auto_6rem_auto]">
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
                        <label key={f} className={cx('inline-flex items-center gap-1 text-sm', offered ? 'text-slate-800' : 'text-slate-400')} title={offered ? undefined : `${nic.network} has no ${f} range`}>
                          <input
                            type="checkbox"
                            checked={nic.families.includes(f)}
                            disabled={!offered}
                            onChange={(e) => setNic(nic.key, { families: e.target.checked ? [...nic.families, f].sort() as Family[] : nic.families.filter((x) => x !== f) })}
                          />
                          {f}
                        </label>
                      );
                    })}
                  </div>
                </fieldset>
                <label className="flex flex-col gap-0.5 text-xs text-slate-600">
                  Address classes
                  <Input type="number" min={1} max={4} inputMode="numeric" value={nic.addressClasses} onChange={(e) => setNic(nic.key, { addressClasses: e.target.value })} required />
                </label>
                <Button type="button" variant="ghost" className="text-xs" aria-label={`Remove interface ${n}`} onClick={() => set({ interfaces: d.interfaces.filter((x) => x.key !== nic.key) })}>
                  Remove
                </Button>
              </div>
            );
          })}
          {nicError && (
            <p className="text-xs text-red-700" id="machine-interfaces-error" data-testid="machine-interfaces-error">
              {nicError}
            </p>
          )}
          <div className="flex flex-wrap items-center gap-2">
            <Button
              type="button"
              variant="secondary"
              className="text-xs"
              disabled={d.interfaces.length >= MAX_INTERFACES || (networks.isSuccess && networkItems.length === 0)}
              onClick={() => {
                set({ interfaces: [...d.interfaces, { key: nextKey, network: '', families: [], addressClasses: '1' }] });
                setNextKey(nextKey + 1);
              }}
            >
              Add interface
            </Button>
            {networks.isSuccess && networkItems.length === 0 && (
              <span className="text-xs text-slate-500">
                This project has no networks yet: <TextLink href={`/projects/${project}/networks`}>create one</TextLink> to give machines addresses.
              </span>
            )}
          </div>
        </fieldset>
      </div>

      <div className="space-y-3">
        <div>
          <div className="mb-1 flex items-baseline justify-between">
            <p className="text-sm font-medium text-slate-700">Availability</p>
            <span className="text-xs text-slate-400" title="Refreshed every few seconds while this form is open">
              live · {catalogue.isFetching ? 'checking…' : 'free now'}
            </span>
          </div>
          <AvailabilityMatrix locations={cat.locations} classes={cat.classes} selected={{ location: d.location, class: d.class }} onSelect={(choice) => set(choice)} />
        </div>
        <div data-testid="availability-summary" aria-live="polite" className="rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm">
          {!loc ? null : !loc.usable ? (
            <p className="text-red-800">
              <Badge tone="red">LocationUnavailable</Badge> {loc.reason}
            </p>
          ) : (
            <p className="text-slate-800">
              <strong>{d.class}</strong> in <strong>{d.location}</strong>:{' '}
              {(cell?.free ?? 0) > 0 ? (
                <>
                  <span className="font-semibold text-emerald-700">{cell!.free} free</span> of {cell!.total}.
                </>
              ) : (
                <span className="text-amber-800">none free now — the request waits in Pending and binds when one is released.</span>
              )}
              {cls?.requiresApproval && <span className="mt-1 block text-xs text-amber-800">This class needs an operator&apos;s approval before a machine is allocated.</span>}
            </p>
          )}
        </div>
        {err && !placed && (
          <Alert testId="request-error">
            {quota ? (
              <>
                <strong>Quota exceeded:</strong> {err.message}. <TextLink href={`/projects/${project}/quota`}>Request an increase</TextLink>
              </>
            ) : (
              errorMessage(err)
            )}
          </Alert>
        )}
        <div className="flex gap-2">
          <Button type="submit" className="flex-1" disabled={create.isPending || nicsIncomplete || !d.name.trim()}>
            {create.isPending ? 'Requesting…' : 'Request machine'}
          </Button>
          {onCancel && (
            <Button type="button" variant="secondary" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </div>
        {nicsIncomplete && <p className="text-xs text-slate-500">Each interface needs a network and at least one family.</p>}
      </div>
    </form>
  );
}
