'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useConfirm } from '@/components/ui/confirm-dialog';
import { Button, Card, Field, Input, Select, Table, Td } from '@/components/ui/primitives';
import { ErrorLine, useInvalidateQuota } from './admin-parts';

/** The resource types quota manages: their kind of amount, units and claiming kinds; register or unregister one. */
export function Registrations() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const list = useQuery(trpc.quota.admin.registrations.list.queryOptions());
  const create = useMutation(trpc.quota.admin.registrations.create.mutationOptions({ onSuccess: () => void invalidate() }));
  const remove = useMutation(trpc.quota.admin.registrations.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const { ask, dialog } = useConfirm();
  function onCreate(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    create.mutate({
      resourceType: String(f.get('resourceType') ?? '').trim(),
      type: f.get('type') === 'Allocation' ? 'Allocation' : 'Entity',
      baseUnit: String(f.get('baseUnit') ?? ''),
      displayUnit: String(f.get('displayUnit') ?? '') || String(f.get('baseUnit') ?? ''),
      claimingKinds: String(f.get('claimingKinds') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      description: String(f.get('description') ?? ''),
    });
  }
  return (
    <Card title="Resource registrations">
      {dialog}
      <Table head={['Resource type', 'Type', 'Units', 'Claimed by', 'Active', '']}>
        {list.data?.map((r) => (
          <tr key={r.id} data-testid="registration-row">
            <Td>
              <code className="text-xs">{r.resourceType}</code>
              {r.description && <span className="block text-xs text-slate-500">{r.description}</span>}
            </Td>
            <Td>{r.type}</Td>
            <Td className="text-xs">
              {r.displayUnit}
              {r.unitConversionFactor !== 1 ? ` (= ${r.unitConversionFactor} ${r.baseUnit})` : ''}
            </Td>
            <Td className="text-xs">{r.claimingKinds.join(', ')}</Td>
            <Td>
              <StatusBadge kind="active" state={r.active ? 'Active' : 'Inactive'} />
            </Td>
            <Td>
              <Button
                variant="ghost"
                aria-label={`Unregister ${r.resourceType}`}
                onClick={() =>
                  ask({
                    title: `Unregister ${r.resourceType}?`,
                    body: 'Quota stops knowing this resource type. Refused while grants or live claims use it.',
                    confirmLabel: 'Unregister',
                    run: () => remove.mutateAsync({ resourceType: r.resourceType }),
                  })
                }
              >
                Unregister
              </Button>
            </Td>
          </tr>
        ))}
      </Table>
      <ErrorLine error={remove.error} testId="registration-error" />
      <form onSubmit={onCreate} className="mt-4 grid gap-3 border-t border-slate-100 pt-4 md:grid-cols-3 md:items-end" aria-label="Register a resource type">
        <Field label="Resource type" htmlFor="reg-type">
          <Input id="reg-type" name="resourceType" required placeholder="ipam.miloapis.com/podaddresses" />
        </Field>
        <Field label="Kind of amount" htmlFor="reg-kind">
          <Select id="reg-kind" name="type" defaultValue="Entity">
            <option value="Entity">Entity (count of objects)</option>
            <option value="Allocation">Allocation (an amount)</option>
          </Select>
        </Field>
        <Field label="Claimed by kinds (comma-separated)" htmlFor="reg-kinds">
          <Input id="reg-kinds" name="claimingKinds" required placeholder="PodAddress" />
        </Field>
        <Field label="Base unit" htmlFor="reg-base">
          <Input id="reg-base" name="baseUnit" required placeholder="addresses" />
        </Field>
        <Field label="Display unit" htmlFor="reg-display">
          <Input id="reg-display" name="displayUnit" placeholder="addresses" />
        </Field>
        <Field label="Description" htmlFor="reg-description">
          <Input id="reg-description" name="description" />
        </Field>
        <div>
          <Button type="submit" disabled={create.isPending}>
            Register
          </Button>
        </div>
      </form>
      <ErrorLine error={create.error} />
    </Card>
  );
}
