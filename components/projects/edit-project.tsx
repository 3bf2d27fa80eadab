'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldMessage, invalidProps } from '@/components/ui/errors';
import { Alert, Button, Field, Input } from '@/components/ui/primitives';

/**
 * The project's display name and description, changed by its owners (the slug never changes).
 * A refusal is shown under the field it is about; the page's header follows once saved.
 */
export function EditProjectForm({ project, name, description }: { project: string; name: string; description: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [saved, setSaved] = useState(false);
  const update = useMutation(
    trpc.projects.update.mutationOptions({
      onSuccess: () => {
        setSaved(true);
        router.refresh();
      },
    }),
  );
  const nameError = fieldMessage(update.error, 'name');
  const descriptionError = fieldMessage(update.error, 'description');
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSaved(false);
    const form = new FormData(event.currentTarget);
    update.mutate({ project, name: String(form.get('name') ?? ''), description: String(form.get('description') ?? '') });
  }
  return (
    <form onSubmit={onSubmit} className="space-y-3" noValidate>
      <div className="grid gap-3 md:grid-cols-2">
        <Field label="Display name" htmlFor="project-name" error={nameError}>
          <Input id="project-name" name="name" defaultValue={name} maxLength={100} {...invalidProps(nameError, 'project-name')} />
        </Field>
        <Field label="Description (optional)" htmlFor="project-description" error={descriptionError}>
          <Input id="project-description" name="description" defaultValue={description} {...invalidProps(descriptionError, 'project-description')} />
        </Field>
      </div>
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={update.isPending}>
          Save
        </Button>
        {saved && !update.error && <span className="text-sm text-green-700">Saved.</span>}
      </div>
      {update.error && !nameError && !descriptionError && <Alert testId="project-update-error">{errorMessage(update.error)}</Alert>}
    </form>
  );
}
