'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useCanEdit } from '@/components/projects/hooks';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, Field, Input } from '@/components/ui/primitives';

type Rule = { warningPercent: number; criticalPercent: number; forecastDays: number; hysteresisPercent: number; enabled: boolean };

/** What triggers and clears an alert under `rule`, in words. */
function ruleSentence(rule: Rule): string {
  if (!rule.enabled) return 'Capacity alerts are switched off for this project: no series raises one.';
  const forecast =
    rule.forecastDays > 0
      ? ` A forecast alert fires when the growth of the last days, continued, would fill the series within ${rule.forecastDays} ${rule.forecastDays === 1 ? 'day' : 'days'}.`
      : ' Forecast alerts are off.';
  return (
    `An alert fires when a series (a network's addresses per family, a cluster's pod addresses, the project's quota) reaches ` +
    `${rule.warningPercent} % used (warning) or ${rule.criticalPercent} % (critical), and clears once it is back ` +
    `${rule.hysteresisPercent} points below — at least one whole unit below, so a small series does not flap.${forecast}`
  );
}

/**
 * The project's alert thresholds on the console: what triggers an alert, in words, and for editors
 * a form to change the thresholds every series uses unless its network or cluster has its own.
 */
export function AlertRuleCard({ project }: { project: string }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const queryClient = useQueryClient();
  const rule = useQuery(trpc.capacity.alertRule.queryOptions({ project }));
  const [draft, setDraft] = useState<Record<keyof Omit<Rule, 'enabled'>, string> | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useMutation(
    trpc.capacity.setAlertRule.mutationOptions({
      onSuccess: () => {
        setDraft(null);
        setSaved(true);
        void queryClient.invalidateQueries({ queryKey: trpc.capacity.alertRule.queryKey({ project }) });
      },
    }),
  );
  const r = rule.data;
  const form = draft ??
    (r && {
      warningPercent: String(r.warningPercent),
      criticalPercent: String(r.criticalPercent),
      forecastDays: String(r.forecastDays),
      hysteresisPercent: String(r.hysteresisPercent),
    }) ?? { warningPercent: '', criticalPercent: '', forecastDays: '', hysteresisPercent: '' };
  const set = (key: keyof typeof form, value: string) => {
    setSaved(false);
    setDraft({ ...form, [key]: value });
  };

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate({
      project,
      warningPercent: Number(form.warningPercent),
      criticalPercent: Number(form.criticalPercent),
      forecastDays: Number(form.forecastDays),
      hysteresisPercent: Number(form.hysteresisPercent),
      enabled: r?.enabled ?? true,
    });
  }

  return (
    <Card title="Alert thresholds" actions={r?.isDefault ? <Badge>defaults</Badge> : undefined}>
      {rule.error && <Alert>{errorMessage(rule.error)}</Alert>}
      {r && (
        <p className="text-sm text-slate-700" data-testid="alert-rule-sentence">
          {ruleSentence(r)}
          {r.objectRules > 0 && ` ${r.objectRules === 1 ? 'One network or cluster has' : `${r.objectRules} networks or clusters have`} thresholds of its own.`}
        </p>
      )}
      {r && canEdit && (
        <form aria-label="Alert thresholds" onSubmit={onSubmit} className="mt-4 grid grid-cols-2 gap-3 sm:grid-cols-4">
          <Field label="Warning at (%)" htmlFor="alert-warning">
            <Input
              id="alert-warning"
              type="number"
              inputMode="decimal"
              min={1}
              max={100}
              value={form.warningPercent}
              onChange={(e) => set('warningPercent', e.target.value)}
            />
          </Field>
          <Field label="Critical at (%)" htmlFor="alert-critical">
            <Input
              id="alert-critical"
              type="number"
              inputMode="decimal"
              min={1}
              max={100}
              value={form.criticalPercent}
              onChange={(e) => set('criticalPercent', e.target.value)}
            />
          </Field>
          <Field label="Full within (days, 0: off)" htmlFor="alert-forecast">
            <Input
              id="alert-forecast"
              type="number"
              inputMode="numeric"
              min={0}
              max={3650}
              value={form.forecastDays}
              onChange={(e) => set('forecastDays', e.target.value)}
            />
          </Field>
          <Field label="Clears (points below)" htmlFor="alert-hysteresis">
            <Input
              id="alert-hysteresis"
              type="number"
              inputMode="decimal"
              min={0}
              max={99}
              value={form.hysteresisPercent}
              onChange={(e) => set('hysteresisPercent', e.target.value)}
            />
          </Field>
          <div className="col-span-2 flex flex-wrap items-center gap-3 sm:col-span-4">
            <Button type="submit" disabled={save.isPending || draft === null}>
              {save.isPending ? 'Saving…' : 'Save thresholds'}
            </Button>
            {saved && (
              <span className="text-sm text-emerald-800" role="status" data-testid="alert-rule-saved">
                Saved: every series of the project without thresholds of its own uses them from the next evaluation.
              </span>
            )}
          </div>
          {save.error && (
            <div className="col-span-2 sm:col-span-4">
              <Alert testId="alert-rule-error">{errorMessage(save.error)}</Alert>
            </div>
          )}
        </form>
      )}
    </Card>
  );
}
