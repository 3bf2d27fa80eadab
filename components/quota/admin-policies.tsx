'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useConfirm } from '@/components/ui/confirm-dialog';
import { Button, Card, Table, Td } from '@/components/ui/primitives';
import { ErrorLine, formatAmounts, useInvalidateQuota } from './admin-parts';
import { PolicyForm, type PolicyDraft } from './admin-policy-form';

function ReadyBadge({ ready, reason, message }: { ready: boolean; reason: string; message: string }) {
  return (
    <div>
      <StatusBadge kind="active" state={ready ? 'Ready' : 'NotReady'} />
      {!ready && (
        <span className="mt-1 block whitespace-pre-wrap text-xs text-red-800" data-testid="policy-error">
          {reason}: {message}
        </span>
      )}
    </div>
  );
}

/** Grant creation policies (run when a project is created) and claim creation policies (one per kind), with their readiness. */
export function Policies() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const grantPolicies = useQuery(trpc.quota.admin.policies.grant.list.queryOptions());
  const claimPolicies = useQuery(trpc.quota.admin.policies.claim.list.queryOptions());
  const removeGrant = useMutation(trpc.quota.admin.policies.grant.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const removeClaim = useMutation(trpc.quota.admin.policies.claim.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const [draft, setDraft] = useState<{ kind: 'grant' | 'claim'; draft: PolicyDraft } | null>(null);
  const blank = (kind: 'grant' | 'claim'): PolicyDraft => ({
    mode: 'create',
    name: '',
    description: '',
    triggerKind: '',
    constraints: '',
    template: kind === 'grant' ? 'extra-{{trigger.metadata.name}}' : 'x-{{requestInfo.name}}',
    amounts: '',
    enabled: true,
  });
  const { ask, dialog } = useConfirm();
  return (
    <Card title="Policies">
      {dialog}
      <div className="space-y-6">
        <section aria-labelledby="grant-policies">
          <div className="mb-2 flex items-center justify-between">
            <h3 id="grant-policies" className="text-sm font-semibold text-slate-800">
              Grant creation policies <span className="font-normal text-slate-500">(run when a project is created)</span>
            </h3>
            <Button variant="secondary" onClick={() => setDraft({ kind: 'grant', draft: blank('grant') })}>
              New grant policy
            </Button>
          </div>
          <Table head={['Name', 'Constraints', 'Grant name', 'Allowances', 'Enabled', 'Ready', '']}>
            {grantPolicies.data?.map((p) => (
              <tr key={p.id} data-testid="grant-policy-row">
                <Td>
                  <code className="text-xs">{p.name}</code>
                  <span className="block text-xs text-slate-500">generation {p.generation}</span>
                </Td>
                <Td className="font-mono text-xs">{p.constraints.length ? p.constraints.map((c) => c.expression).join(' && ') : 'always'}</Td>
                <Td className="font-mono text-xs">{p.grantNameTemplate}</Td>
                <Td className="whitespace-pre font-mono text-xs">{formatAmounts(p.allowances)}</Td>
                <Td>{p.enabled ? 'yes' : 'no'}</Td>
                <Td>
                  <ReadyBadge ready={p.ready} reason={p.readyReason} message={p.readyMessage} />
                </Td>
                <Td>
                  <div className="flex gap-1.5">
                    <Button
                      variant="secondary"
                      aria-label={`Edit ${p.name}`}
                      onClick={() =>
                        setDraft({
                          kind: 'grant',
                          draft: {
                            mode: 'edit',
                            name: p.name,
                            description: p.description,
                            triggerKind: 'Project',
                            constraints: p.constraints.map((c) => c.expression).join('\n'),
                            template: p.grantNameTemplate,
                            amounts: formatAmounts(p.allowances),
                            enabled: p.enabled,
                          },
                        })
                      }
                    >
                      Edit
                    </Button>
                    <Button
                      variant="ghost"
                      aria-label={`Delete ${p.name}`}
                      onClick={() =>
                        ask({
                          title: `Delete grant policy "${p.name}"?`,
                          body: 'Projects created from now on no longer get its grant; grants it already made stay.',
                          confirmLabel: 'Delete',
                          run: () => removeGrant.mutateAsync({ name: p.name }),
                        })
                      }
                    >
                      Delete
                    </Button>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
          {draft?.kind === 'grant' && <PolicyForm key={draft.draft.name || 'new'} kind="grant" draft={draft.draft} onDone={() => setDraft(null)} />}
        </section>
        <section aria-labelledby="claim-policies">
          <div className="mb-2 flex items-center justify-between">
            <h3 id="claim-policies" className="text-sm font-semibold text-slate-800">
              Claim creation policies <span className="font-normal text-slate-500">(one per kind; decide each create)</span>
            </h3>
            <Button variant="secondary" onClick={() => setDraft({ kind: 'claim', draft: blank('claim') })}>
              New claim policy
            </Button>
          </div>
          <Table head={['Name', 'Kind', 'Constraints', 'Claim name', 'Requests', 'Enabled', 'Ready', '']}>
            {claimPolicies.data?.map((p) => (
              <tr key={p.id} data-testid="claim-policy-row">
                <Td>
                  <code className="text-xs">{p.name}</code>
                  <span className="block text-xs text-slate-500">generation {p.generation}</span>
                </Td>
                <Td>{p.triggerKind}</Td>
                <Td className="font-mono text-xs">{p.constraints.length ? p.constraints.map((c) => c.expression).join(' && ') : 'always'}</Td>
                <Td className="font-mono text-xs">{p.claimNameTemplate}</Td>
                <Td className="whitespace-pre font-mono text-xs">{formatAmounts(p.requests)}</Td>
                <Td>{p.enabled ? 'yes' : 'no (not quota-managed)'}</Td>
                <Td>
                  <ReadyBadge ready={p.ready} reason={p.readyReason} message={p.readyMessage} />
                </Td>
                <Td>
                  <div className="flex gap-1.5">
                    <Button
                      variant="secondary"
                      aria-label={`Edit ${p.name}`}
                      onClick={() =>
                        setDraft({
                          kind: 'claim',
                          draft: {
                            mode: 'edit',
                            name: p.name,
                            description: p.description,
                            triggerKind: p.triggerKind,
                            constraints: p.constraints.map((c) => c.expression).join('\n'),
                            template: p.claimNameTemplate,
                            amounts: formatAmounts(p.requests),
                            enabled: p.enabled,
                          },
                        })
                      }
                    >
                      Edit
                    </Button>
                    <Button
                      variant="ghost"
                      aria-label={`Delete ${p.name}`}
                      onClick={() =>
                        ask({
                          title: `Delete claim policy "${p.name}"?`,
                          body: 'Its kind stops being counted against quota: new objects of that kind are admitted without a claim.',
                          confirmLabel: 'Delete',
                          run: () => removeClaim.mutateAsync({ name: p.name }),
                        })
                      }
                    >
                      Delete
                    </Button>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
          {draft?.kind === 'claim' && <PolicyForm key={draft.draft.name || 'new'} kind="claim" draft={draft.draft} onDone={() => setDraft(null)} />}
        </section>
        <ErrorLine error={removeGrant.error ?? removeClaim.error} />
      </div>
    </Card>
  );
}
