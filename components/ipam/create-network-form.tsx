'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldError, fieldMessage, invalidProps } from '@/components/ui/errors';
import { Alert, Button, Field, Input, Select } from '@/components/ui/primitives';
import { useInvalidateIpam } from './hooks';

interface RootRow {
  key: number;
  cidr: string;
  minPrefixLength: string;
  maxPrefixLength: string;
  defaultPrefixLength: string;
  strategy: '' | 'FirstFit' | 'BestFit';
  reserveLeading: string;
  reserveTrailing: string;
}

const emptyRow = (key: number): RootRow => ({
  key,
  cidr: '',
  minPrefixLength: '',
  maxPrefixLength: '',
  defaultPrefixLength: '',
  strategy: '',
  reserveLeading: '',
  reserveTrailing: '',
});
const num = (s: string) => (s.trim() === '' ? undefined : Number(s));
/** A count of addresses goes as the digits typed: exact at IPv6 sizes, beyond what a JSON number holds. */
const count = (s: string) => (s.trim() === '' ? undefined : s.trim());
const ruleFields = ['minPrefixLength', 'maxPrefixLength', 'defaultPrefixLength', 'strategy', 'reserveLeading', 'reserveTrailing'] as const;

/**
 * Creates a network with one or more root CIDRs, each with optional allocation rules; opens it when
 * created, leaving the form at its defaults. A change clears the last attempt's errors (they were
 * about the old values).
 */
export function CreateNetworkForm({ project }: { project: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const invalidate = useInvalidateIpam();
  const [rows, setRows] = useState<RootRow[]>([emptyRow(0)]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation(
    trpc.ipam.networks.create.mutationOptions({
      onSuccess: (network) => {
        void invalidate();
        setRows([emptyRow(0)]);
        setName('');
        setDescription('');
        router.push(`/projects/${project}/networks/${network.name}`);
      },
    }),
  );
  const err = create.error;
  const changed = () => {
    if (create.error) create.reset();
  };
  const update = (key: number, patch: Partial<RootRow>) => {
    setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
    changed();
  };

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({
      project,
      name: name.trim(),
      description: description.trim() || undefined,
      cidrs: rows.map((r) => ({
        cidr: r.cidr.trim(),
        minPrefixLength: num(r.minPrefixLength),
        maxPrefixLength: num(r.maxPrefixLength),
        defaultPrefixLength: num(r.defaultPrefixLength),
        strategy: r.strategy || undefined,
        reserveLeading: count(r.reserveLeading),
        reserveTrailing: count(r.reserveTrailing),
      })),
    });
  }

  const shownFields = ['name', 'description', ...rows.flatMap((_, i) => [`cidrs.${i}.cidr`, ...ruleFields.map((f) => `cidrs.${i}.${f}`)])];
  const unplaced = err && !shownFields.some((f) => fieldError(err, f));

  return (
    <form onSubmit={onSubmit} className="space-y-4" aria-label="Create network">
      <Field label="Name" htmlFor="network-name" error={fieldMessage(err, 'name')} hint="Lower-case letters, digits and dashes">
        <Input
          id="network-name"
          name="name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            changed();
          }}
          placeholder="prod-vpc"
          required
          autoComplete="off"
          {...invalidProps(fieldMessage(err, 'name'), 'network-name')}
        />
      </Field>
      <Field label="Description (optional)" htmlFor="network-description" error={fieldMessage(err, 'description')}>
        <Input
          id="network-description"
          name="description"
          value={description}
          onChange={(e) => {
            setDescription(e.target.value);
            changed();
          }}
          placeholder="Production workloads, eu-west"
          {...invalidProps(fieldMessage(err, 'description'), 'network-description')}
        />
      </Field>
      <fieldset className="space-y-3">
        <legend className="text-sm font-medium text-slate-700">Root CIDRs</legend>
        {rows.map((row, i) => {
          const id = `network-cidr-${row.key}`;
          const fe = (f: string) => fieldMessage(err, `cidrs.${i}.${f}`);
          const rulesInvalid = ruleFields.some((f) => fe(f));
          return (
            <div key={row.key} className="rounded-md border border-slate-200 bg-slate-50/60 p-3">
              <div className="flex items-end gap-2">
                <div className="flex-1">
                  <Field label={i === 0 ? 'Root CIDR' : `Root CIDR ${i + 1}`} htmlFor={id} error={fe('cidr')}>
                    <Input
                      id={id}
                      value={row.cidr}
                      onChange={(e) => update(row.key, { cidr: e.target.value })}
                      placeholder={i === 0 ? '10.20.0.0/16' : '2001:db8:20::/48'}
                      required
                      autoComplete="off"
                      spellCheck={false}
                      className="font-mono"
                      {...invalidProps(fe('cidr'), id)}
                    />
                  </Field>
                </div>
                {rows.length > 1 && (
                  <Button
                    type="button"
                    variant="ghost"
                    aria-label={`Remove root CIDR ${i + 1}`}
                    onClick={() => {
                      setRows((rs) => rs.filter((r) => r.key !== row.key));
                      changed();
                    }}
                  >
                    Remove
                  </Button>
                )}
              </div>
              <details className="mt-2 text-sm" open={rulesInvalid || undefined}>
                <summary className="cursor-pointer select-none text-xs font-medium text-slate-600 hover:text-slate-900">Allocation rules (optional)</summary>
                <p className="mt-1 text-xs text-slate-500">
                  Empty fields take the defaults: prefixes from the range's own size to /32 (/128), default /28 (/64), FirstFit, nothing reserved.
                </p>
                <div className="mt-2 grid grid-cols-2 gap-2">
                  <RuleInput
                    label="Min prefix"
                    id={`${id}-min`}
                    value={row.minPrefixLength}
                    error={fe('minPrefixLength')}
                    onChange={(v) => update(row.key, { minPrefixLength: v })}
                    placeholder="auto"
                  />
                  <RuleInput
                    label="Max prefix"
                    id={`${id}-max`}
                    value={row.maxPrefixLength}
                    error={fe('maxPrefixLength')}
                    onChange={(v) => update(row.key, { maxPrefixLength: v })}
                    placeholder="auto"
                  />
                  <RuleInput
                    label="Default prefix"
                    id={`${id}-default`}
                    value={row.defaultPrefixLength}
                    error={fe('defaultPrefixLength')}
                    onChange={(v) => update(row.key, { defaultPrefixLength: v })}
                    placeholder="auto"
                  />
                  <Field label="Strategy" htmlFor={`${id}-strategy`} error={fe('strategy')}>
                    <Select id={`${id}-strategy`} value={row.strategy} onChange={(e) => update(row.key, { strategy: e.target.value as RootRow['strategy'] })}>
                      <option value="">FirstFit</option>
                      <option value="BestFit">BestFit</option>
                    </Select>
                  </Field>
                  <RuleInput
                    label="Reserve leading"
                    id={`${id}-lead`}
                    value={row.reserveLeading}
                    error={fe('reserveLeading')}
                    onChange={(v) => update(row.key, { reserveLeading: v })}
                    placeholder="0"
                    count
                  />
                  <RuleInput
                    label="Reserve trailing"
                    id={`${id}-trail`}
                    value={row.reserveTrailing}
                    error={fe('reserveTrailing')}
                    onChange={(v) => update(row.key, { reserveTrailing: v })}
                    placeholder="0"
                    count
                  />
                </div>
              </details>
            </div>
          );
        })}
        <Button
          type="button"
          variant="secondary"
          onClick={() => setRows((rs) => [...rs, emptyRow(Math.max(...rs.map((r) => r.key)) + 1)])}
          disabled={rows.length >= 16}
        >
          Add another CIDR
        </Button>
      </fieldset>
      {unplaced && <Alert testId="create-network-error">{errorMessage(err)}</Alert>}
      <Button type="submit" disabled={create.isPending} className="w-full">
        {create.isPending ? 'Creating…' : 'Create network'}
      </Button>
    </form>
  );
}

/** A prefix length (0–128), or with `count` a number of addresses of any size (digits, sent exact). */
function RuleInput({
  label,
  id,
  value,
  error,
  onChange,
  placeholder,
  count = false,
}: {
  label: string;
  id: string;
  value: string;
  error: string | null;
  onChange: (v: string) => void;
  placeholder: string;
  count?: boolean;
}) {
  const kind = count ? { type: 'text', pattern: '[0-9]*' } : { type: 'number', min: 0, max: 128 };
  return (
    <Field label={label} htmlFor={id} error={error}>
      <Input
        id={id}
        {...kind}
        inputMode="numeric"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={placeholder}
        {...invalidProps(error, id)}
      />
    </Field>
  );
}
