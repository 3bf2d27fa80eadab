'use client';
import { useMutation } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Button, Field, Input } from '@/components/ui/primitives';
import { ErrorLine, parseAmounts, textArea, useInvalidateQuota } from './admin-parts';

/** A grant or claim creation policy as the form edits it (constraints and amounts as text, one per line). */
export interface PolicyDraft {
  mode: 'create' | 'edit';
  name: string;
  description: string;
  triggerKind: string;
  constraints: string;
  template: string;
  amounts: string;
  enabled: boolean;
}

/** Creates or edits a grant or claim creation policy; `onDone` closes it after a save or on Cancel. */
export function PolicyForm({ kind, draft, onDone }: { kind: 'grant' | 'claim'; draft: PolicyDraft; onDone: () => void }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const opts = { onSuccess: () => (onDone(), void invalidate()) };
  const grantCreate = useMutation(trpc.quota.admin.policies.grant.create.mutationOptions(opts));
  const grantUpdate = useMutation(trpc.quota.admin.policies.grant.update.mutationOptions(opts));
  const claimCreate = useMutation(trpc.quota.admin.policies.claim.create.mutationOptions(opts));
  const claimUpdate = useMutation(trpc.quota.admin.policies.claim.update.mutationOptions(opts));
  const active = kind === 'grant' ? (draft.mode === 'create' ? grantCreate : grantUpdate) : draft.mode === 'create' ? claimCreate : claimUpdate;
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const constraints = String(f.get('constraints') ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((expression) => ({ expression }));
    const common = { name: String(f.get('name') ?? ''), description: String(f.get('description') ?? ''), constraints, enabled: f.get('enabled') === 'on' };
    const amounts = parseAmounts(String(f.get('amounts') ?? ''));
    if (kind === 'grant') {
      const input = {
        ...common,
        grantNameTemplate: String(f.get('template') ?? ''),
        allowances: amounts.map((a) => ({ resourceType: a.resourceType, amount: Number(a.amount) })),
      };
      if (draft.mode === 'create') grantCreate.mutate(input);
      else grantUpdate.mutate(input);
    } else {
      const input = { ...common, triggerKind: String(f.get('triggerKind') ?? ''), claimNameTemplate: String(f.get('template') ?? ''), requests: amounts };
      if (draft.mode === 'create') claimCreate.mutate(input);
      else claimUpdate.mutate(input);
    }
  }
  const id = (s: string) => `${kind}-policy-${s}`;
  return (
    <form
      onSubmit={onSubmit}
      className="mt-4 grid gap-3 rounded-md border border-slate-200 bg-slate-50 p-3 md:grid-cols-2"
      aria-label={`${draft.mode === 'create' ? 'New' : 'Edit'} ${kind} creation policy`}
    >
      <Field label="Name" htmlFor={id('name')}>
        <Input id={id('name')} name="name" required defaultValue={draft.name} readOnly={draft.mode === 'edit'} />
      </Field>
      {kind === 'claim' ? (
        <Field label="Trigger kind" htmlFor={id('kind')} hint="One policy per kind, e.g. IPClaim, Machine">
          <Input id={id('kind')} name="triggerKind" required defaultValue={draft.triggerKind} />
        </Field>
      ) : (
        <Field label="Trigger" htmlFor={id('kind')}>
          <Input id={id('kind')} value="Project created" readOnly />
        </Field>
      )}
      <Field label="Constraints (CEL, one per line, all must be true)" htmlFor={id('constraints')} hint="Variables: trigger, requestInfo, user">
        <textarea
          id={id('constraints')}
          name="constraints"
          rows={3}
          className={textArea}
          defaultValue={draft.constraints}
          placeholder={'trigger.metadata.name.startsWith("acme-")'}
        />
      </Field>
      <Field label={kind === 'grant' ? 'Grant name template' : 'Claim name template'} htmlFor={id('template')} hint="Text with {{ CEL }} segments">
        <Input id={id('template')} name="template" required defaultValue={draft.template} className="font-mono text-xs" />
      </Field>
      <Field label={kind === 'grant' ? 'Allowances (type=amount per line)' : 'Requests (type=amount or type={{ CEL }} per line)'} htmlFor={id('amounts')}>
        <textarea id={id('amounts')} name="amounts" rows={3} required className={textArea} defaultValue={draft.amounts} />
      </Field>
      <div className="space-y-3">
        <Field label="Description" htmlFor={id('description')}>
          <Input id={id('description')} name="description" defaultValue={draft.description} />
        </Field>
        <label className="flex items-center gap-2 text-sm text-slate-700">
          <input type="checkbox" name="enabled" defaultChecked={draft.enabled} /> Enabled
        </label>
        <div className="flex gap-2">
          <Button type="submit" disabled={active.isPending}>
            {draft.mode === 'create' ? 'Create policy' : 'Save policy'}
          </Button>
          <Button type="button" variant="ghost" onClick={onDone}>
            Cancel
          </Button>
        </div>
      </div>
      <div className="md:col-span-2">
        <ErrorLine error={active.error} />
      </div>
    </form>
  );
}
