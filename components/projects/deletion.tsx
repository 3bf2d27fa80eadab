'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, Field, Input, Table, Td, TextLink, formatTime } from '@/components/ui/primitives';
import { EditProjectForm } from './edit-project';

/** While a deletion runs the view follows it (blockers change as the worker retries). */
const DELETION_REFRESH_MS = 3_000;

const dependencyLabel: Record<string, string> = {
  provider: 'the machine provider',
  fleet: 'the fleet reconciler',
  meridian: 'a retried step',
};

const remainingLabels: [key: string, one: string, many: string][] = [
  ['machines', 'machine', 'machines'],
  ['networks', 'network', 'networks'],
  ['claims', 'IP claim', 'IP claims'],
  ['retained', 'retained allocation', 'retained allocations'],
  ['clusters', 'cluster', 'clusters'],
  ['leases', 'pod lease', 'pod leases'],
  ['quotaClaims', 'quota claim', 'quota claims'],
  ['grants', 'grant', 'grants'],
  ['increaseRequests', 'increase request', 'increase requests'],
];

/**
 * Where a project's deletion stands: what is left, and which object waits on which dependency
 * (attempts, next attempt, last error). Follows the deletion live; once the project is gone, says
 * so. For members (viewer and up) and platform operators. `part`: `banner` (the summary every
 * project tab shows), `details` (the table, under that banner on Settings), or `all`.
 */
export function DeletionStatus({ project, part = 'all' }: { project: string; part?: 'banner' | 'details' | 'all' }) {
  const banner = part !== 'details';
  const details = part !== 'banner';
  const trpc = useTRPC();
  const status = useQuery({
    ...trpc.projects.deletion.queryOptions({ project }),
    retry: false,
    refetchInterval: (q) => (q.state.error || (q.state.data && q.state.data.phase !== 'Deleting') ? false : DELETION_REFRESH_MS),
  });
  if (status.error) {
    const gone = (status.error as { data?: { code?: string } }).data?.code === 'NOT_FOUND';
    if (!banner) return gone ? <p className="text-sm text-slate-600">Deleted: nothing is left.</p> : <Alert>{errorMessage(status.error)}</Alert>;
    return gone ? (
      <Alert tone="green" testId="project-deleted">
        Project <strong>{project}</strong> has been deleted: everything it held was released. Its history stays in the audit log.{' '}
        <TextLink href="/projects">Back to projects</TextLink>
      </Alert>
    ) : (
      <Alert>{errorMessage(status.error)}</Alert>
    );
  }
  const s = status.data;
  if (!s) return <p className="text-sm text-slate-500">Loading…</p>;
  if (s.phase !== 'Deleting') return null;
  const counts: Record<string, number> = s.remaining;
  const left = remainingLabels.filter(([k]) => counts[k] > 0);
  return (
    <div className="space-y-3" data-testid="deletion-status">
      {banner && (
        <Alert tone="amber" testId="deleting-banner">
          <strong>This project is being deleted</strong> (asked by {s.requestedBy ?? 'someone'} at {formatTime(s.requestedAt)}). Nothing new can be created in
          it; what it holds is being released.{' '}
          {left.length > 0 ? (
            <>Left: {left.map(([k, one, many]) => `${counts[k]} ${counts[k] === 1 ? one : many}`).join(', ')}.</>
          ) : (
            <>Nothing is left; finishing.</>
          )}
          {s.nextPassAt && s.blockers.length > 0 && (
            <>
              {' '}
              Next check {formatTime(s.nextPassAt)} (check {s.passes + 1}).
            </>
          )}
        </Alert>
      )}
      {details && s.blockers.length === 0 && <p className="text-sm text-slate-600">Nothing waits on a dependency; the worker is releasing what is left.</p>}
      {details && s.blockers.length > 0 && (
        <Table head={['Object', 'Waiting on', 'Status', 'Attempts', 'Next attempt', 'Last error', 'Since']}>
          {s.blockers.map((b) => (
            <tr key={`${b.objectKind}/${b.objectId}`} data-testid="deletion-blocker">
              <Td>
                <span className="text-xs text-slate-500">{b.objectKind}</span> {b.objectName}
              </Td>
              <Td>
                <Badge tone={b.waitingOn === 'provider' ? 'amber' : 'slate'}>{b.waitingOn}</Badge>
                <div className="text-xs text-slate-500">{dependencyLabel[b.waitingOn] ?? b.waitingOn}</div>
              </Td>
              <Td className="max-w-xs">{b.status}</Td>
              <Td className="tabular-nums">{b.attempts}</Td>
              <Td>{formatTime(b.nextAttemptAt)}</Td>
              <Td className="max-w-xs break-words text-red-700">{b.lastError ?? '—'}</Td>
              <Td>{formatTime(b.since)}</Td>
            </tr>
          ))}
        </Table>
      )}
      {part === 'banner' && s.blockers.length > 0 && (
        <p className="text-sm text-slate-600">
          Waiting: {s.blockers.map((b) => `${b.objectKind} ${b.objectName} on ${b.waitingOn} (${b.attempts} attempt${b.attempts === 1 ? '' : 's'})`).join('; ')}{' '}
          — <TextLink href={`/projects/${project}/settings`}>details</TextLink>
        </p>
      )}
    </div>
  );
}

/** What a project holds, counted, in the words of the deletion's status ("2 networks, 1 IP claim"). */
function heldList(counts: Record<string, number>): string[] {
  return remainingLabels.filter(([k]) => counts[k] > 0).map(([k, one, many]) => `${counts[k]} ${counts[k] === 1 ? one : many}`);
}

/**
 * What deleting the project will release, counted now (the deletion's own inventory: the same
 * counts its status shows while it runs).
 */
function ToBeReleased({ project }: { project: string }) {
  const trpc = useTRPC();
  const status = useQuery(trpc.projects.deletion.queryOptions({ project }));
  if (status.error) return <Alert>{errorMessage(status.error)}</Alert>;
  if (!status.data) return <p className="text-sm text-slate-500">Counting what the project holds…</p>;
  const held = heldList(status.data.remaining);
  return (
    <div className="text-sm text-slate-700" data-testid="to-be-released">
      <p className="font-medium">What will be released:</p>
      {held.length > 0 ? (
        <ul className="ml-5 list-disc">
          {held.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : (
        <p>Nothing but the project itself: it holds no networks, claims, clusters, machines or quota.</p>
      )}
    </div>
  );
}

/**
 * Deleting a project (owners, platform operators): the list of what will be released, the slug
 * typed to confirm, then a confirmation dialog saying what goes. The deletion itself runs in the
 * worker; the status follows it.
 */
export function DeleteProjectForm({ project, onDeleted }: { project: string; onDeleted?: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [confirm, setConfirm] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState(false);
  const remove = useMutation(
    trpc.projects.delete.mutationOptions({
      onSuccess: () => {
        setAsking(false);
        void queryClient.invalidateQueries({ queryKey: trpc.projects.deletion.queryKey({ project }) });
        // Without a caller of its own (the project's settings page) the user goes to the list,
        // which says what happens next: this page disappears with the project.
        if (onDeleted) {
          onDeleted();
          router.refresh();
        } else router.push(`/projects?deleted=${encodeURIComponent(project)}`);
      },
    }),
  );
  return (
    <div className="space-y-3">
      <p className="text-sm text-slate-700">
        Deleting the project revokes its API tokens at once and refuses anything new in it; then its IP claims (retained ones too), pod leases and clusters,
        machines (cleaned through the provider and verified), quota claims and grants, and networks are released. If the provider is unavailable, the rest goes
        anyway and the machines wait for it, retried with backoff; the deletion finishes by itself. It cannot be undone; the audit log keeps the project&apos;s
        history.
      </p>
      <ToBeReleased project={project} />
      <form
        className="grid gap-3 md:grid-cols-3 md:items-end"
        onSubmit={(e) => {
          e.preventDefault();
          remove.reset();
          setAsking(true);
        }}
      >
        <Field label={`Type ${project} to confirm`} htmlFor="delete-confirm" error={fieldError(remove.error, 'confirm')}>
          <Input id="delete-confirm" value={confirm} onChange={(e) => setConfirm(e.target.value)} autoComplete="off" />
        </Field>
        <Field label="Reason (optional)" htmlFor="delete-reason">
          <Input id="delete-reason" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
        </Field>
        <Button type="submit" variant="danger" disabled={confirm !== project}>
          Delete project
        </Button>
      </form>
      {asking && (
        <ConfirmDialog
          title={`Delete project ${project}?`}
          confirmLabel="Delete project"
          pending={remove.isPending}
          error={remove.error ? errorMessage(remove.error) : null}
          onCancel={() => setAsking(false)}
          onConfirm={() => remove.mutate({ project, confirm, reason: reason || undefined })}
        >
          Every token of the project stops working now, and everything it holds is released. This cannot be undone.
          <ToBeReleased project={project} />
        </ConfirmDialog>
      )}
    </div>
  );
}

/**
 * The project's settings: its identity (owners change its name and description) and, for owners,
 * deleting it (or its status while it is being deleted).
 */
export function ProjectSettingsView({
  project,
  name,
  description,
  organization,
  role,
  phase,
}: {
  project: string;
  name: string;
  description: string;
  organization: string;
  role: string;
  phase: string;
}) {
  return (
    <div className="space-y-6">
      <Card title="Project">
        <dl className="grid gap-2 text-sm md:grid-cols-4">
          <dt className="text-slate-500">Slug</dt>
          <dd className="font-mono">{project}</dd>
          <dt className="text-slate-500">Name</dt>
          <dd data-testid="project-display-name">{name}</dd>
          <dt className="text-slate-500">Organization</dt>
          <dd>{organization}</dd>
          <dt className="text-slate-500">Your role</dt>
          <dd>{role}</dd>
          <dt className="text-slate-500">Description</dt>
          <dd className="md:col-span-3" data-testid="project-description">
            {description || '—'}
          </dd>
        </dl>
      </Card>
      {role === 'owner' && phase === 'Active' && (
        <Card title="Name and description">
          <EditProjectForm project={project} name={name} description={description} />
        </Card>
      )}
      <Card title={phase === 'Deleting' ? 'Deletion' : 'Delete this project'}>
        {phase === 'Deleting' ? (
          <DeletionStatus project={project} part="details" />
        ) : role === 'owner' ? (
          <DeleteProjectForm project={project} />
        ) : (
          <p className="text-sm text-slate-600">Only the project&apos;s owners (and platform operators) can delete it.</p>
        )}
      </Card>
    </div>
  );
}
