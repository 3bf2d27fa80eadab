'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import type { FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldMessage } from '@/components/ui/errors';
import { Alert, Button, Card, EmptyState, Field, Input, Select, TextLink } from '@/components/ui/primitives';

const text = (form: FormData, name: string) => String(form.get(name) ?? '').trim();

/** Creates an organization (the user becomes its owner), then goes on to its first project. */
export function NewOrganizationForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const create = useMutation(
    trpc.organizations.create.mutationOptions({
      onSuccess: (org) => {
        void queryClient.invalidateQueries({ queryKey: trpc.organizations.list.queryKey() });
        router.push(`/projects/new?organization=${org.slug}`);
      },
    }),
  );
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({ slug: text(form, 'slug'), name: text(form, 'name') });
  }
  const err = create.error;
  return (
    <Card title="New organization">
      <form onSubmit={onSubmit} className="max-w-lg space-y-4" noValidate>
        <Field label="Name" htmlFor="org-name" error={fieldMessage(err, 'name')}>
          <Input id="org-name" name="name" required maxLength={100} />
        </Field>
        <Field label="Slug" htmlFor="org-slug" error={fieldMessage(err, 'slug')} hint="Lower-case letters, digits and dashes; it never changes.">
          <Input id="org-slug" name="slug" required maxLength={63} pattern="[a-z0-9-]+" />
        </Field>
        {err && !fieldMessage(err, 'slug') && !fieldMessage(err, 'name') && <Alert testId="new-organization-error">{errorMessage(err)}</Alert>}
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create organization'}
        </Button>
      </form>
    </Card>
  );
}

/**
 * Creates a project in one of the user's organizations where they may (owner or editor there):
 * it comes with its quota, and the user owns it; opens it when created.
 */
export function NewProjectForm({ organization }: { organization?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const orgs = useQuery(trpc.organizations.list.queryOptions());
  const create = useMutation(
    trpc.projects.create.mutationOptions({
      onSuccess: (project) => {
        void queryClient.invalidateQueries({ queryKey: trpc.projects.list.queryKey() });
        router.push(`/projects/${project.slug}`);
      },
    }),
  );
  if (!orgs.data) return <p className="text-sm text-slate-500">Loading your organizations…</p>;
  const usable = orgs.data.filter((o) => o.role !== null);
  if (usable.length === 0) {
    return (
      <EmptyState title="Create an organization first" action={<TextLink href="/organizations/new">New organization</TextLink>}>
        Projects belong to an organization. You are not a member of any organization yet.
      </EmptyState>
    );
  }
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      organization: text(form, 'organization'),
      slug: text(form, 'slug'),
      name: text(form, 'name'),
      description: text(form, 'description') || undefined,
    });
  }
  const err = create.error;
  const shown = ['slug', 'name', 'organization', 'description'].some((f) => fieldMessage(err, f));
  return (
    <Card title="New project">
      <form onSubmit={onSubmit} className="max-w-lg space-y-4" noValidate>
        <Field label="Organization" htmlFor="project-organization" error={fieldMessage(err, 'organization')}>
          <Select id="project-organization" name="organization" defaultValue={organization ?? usable[0]?.slug}>
            {usable.map((o) => (
              <option key={o.id} value={o.slug}>
                {o.name} ({o.slug})
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Name" htmlFor="project-name" error={fieldMessage(err, 'name')}>
          <Input id="project-name" name="name" required maxLength={100} />
        </Field>
        <Field label="Slug" htmlFor="project-slug" error={fieldMessage(err, 'slug')} hint="Unique across Meridian; lower-case letters, digits and dashes.">
          <Input id="project-slug" name="slug" required maxLength={63} />
        </Field>
        <Field label="Description" htmlFor="project-description" error={fieldMessage(err, 'description')}>
          <Input id="project-description" name="description" maxLength={1000} />
        </Field>
        {err && !shown && <Alert testId="new-project-error">{errorMessage(err)}</Alert>}
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create project'}
        </Button>
      </form>
    </Card>
  );
}
