'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, invalidProps } from '@/components/ui/errors';
import { fieldSentence } from '@/components/ui/messages';
import { withResourceWords } from '@/components/ui/resource-names';
import { Alert, Button, Field, Input, Select, TextLink } from '@/components/ui/primitives';
import type { Catalogue } from './format';
import { useInvalidateFleet } from './hooks';
import { InterfacesFieldset, type NicDraft } from './interfaces-fieldset';
import { networkChoicesInput } from './queries';
import { RequestAvailability } from './request-availability';
import { interfaceError, machineFieldError } from './request-errors';

interface Draft {
  name: string;
  class: string;
  profile: string;
  location: string;
  desiredPower: 'on' | 'off';
  interfaces: NicDraft[];
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

  const create = useMutation(
    trpc.fleet.machines.create.mutationOptions({
      onSuccess: (machine) => {
        void invalidate();
        // Back to the defaults for the next request, then to the machine's page.
        setDraft(null);
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
  const d: Draft = draft ?? {
    name: '',
    class: initialClass,
    profile: cat.profiles[0].name,
    location: pickLocation(cat, initialClass),
    desiredPower: 'on',
    interfaces: [],
  };
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...d, ...patch });
    if (create.error) create.reset();
  };

  const err = create.error;
  const nicError = interfaceError(err);
  const placed = ['name', 'class', 'profile', 'location', 'desiredPower'].some((f) => machineFieldError(err, f)) || nicError !== null;
  const quota = err?.data?.domainCode === 'QuotaExceeded';

  const cls = cat.classes.find((c) => c.name === d.class);
  const loc = cat.locations.find((l) => l.location === d.location);
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
          <Input
            id="machine-name"
            value={d.name}
            onChange={(e) => set({ name: e.target.value })}
            placeholder="db-primary-1"
            required
            maxLength={63}
            autoComplete="off"
            spellCheck={false}
            {...invalidProps(machineFieldError(err, 'name'), 'machine-name')}
          />
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
            <Select
              id="machine-profile"
              value={d.profile}
              onChange={(e) => set({ profile: e.target.value })}
              {...invalidProps(machineFieldError(err, 'profile'), 'machine-profile')}
            >
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
            <Select
              id="machine-location"
              value={d.location}
              onChange={(e) => set({ location: e.target.value })}
              {...invalidProps(machineFieldError(err, 'location'), 'machine-location')}
            >
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

        <InterfacesFieldset
          project={project}
          interfaces={d.interfaces}
          networkItems={networkItems}
          networksLoaded={networks.isSuccess}
          error={nicError}
          onChange={(interfaces) => set({ interfaces })}
        />
      </div>

      <div className="space-y-3">
        <RequestAvailability catalogue={cat} checking={catalogue.isFetching} location={d.location} machineClass={d.class} onSelect={(choice) => set(choice)} />
        {err && !placed && (
          <Alert testId="request-error">
            {quota ? (
              <>
                <strong>Quota exceeded:</strong> {fieldSentence(withResourceWords(err.message))}{' '}
                <TextLink href={`/projects/${project}/quota`}>Request an increase</TextLink>
              </>
            ) : (
              errorMessage(err)
            )}
          </Alert>
        )}
        <div className="flex gap-2">
          <Button
            type="submit"
            className="flex-1"
            disabled={create.isPending || nicsIncomplete || !d.name.trim()}
            aria-describedby={!d.name.trim() || nicsIncomplete ? 'request-machine-why' : undefined}
          >
            {create.isPending ? 'Requesting…' : 'Request machine'}
          </Button>
          {onCancel && (
            <Button type="button" variant="secondary" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </div>
        {(!d.name.trim() || nicsIncomplete) && (
          <p id="request-machine-why" className="text-xs text-slate-600" data-testid="request-machine-why">
            {!d.name.trim() ? 'Give the machine a name to request it.' : 'Each interface needs a network and at least one family.'}
          </p>
        )}
      </div>
    </form>
  );
}
