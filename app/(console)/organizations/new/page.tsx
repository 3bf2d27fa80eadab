import type { Metadata } from 'next';
import { NewOrganizationForm } from '@/components/tenancy/new-forms';
import { PageHeader } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'New organization' };

export default function NewOrganizationPage() {
  return (
    <>
      <PageHeader title="New organization" description="An organization holds projects and the people who work on them. You become its owner." />
      <NewOrganizationForm />
    </>
  );
}
