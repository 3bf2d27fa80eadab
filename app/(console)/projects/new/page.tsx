import type { Metadata } from 'next';
import { NewProjectForm } from '@/components/tenancy/new-forms';
import { PageHeader } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'New project' };

export default async function NewProjectPage({ searchParams }: { searchParams: Promise<{ organization?: string }> }) {
  const { organization } = await searchParams;
  return (
    <>
      <PageHeader
        title="New project"
        description="A project is the tenant boundary: its networks, quota and machines. It gets its quota at once, and you become its owner."
      />
      <NewProjectForm organization={organization} />
    </>
  );
}
