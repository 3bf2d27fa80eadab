'use client';
import { Audit } from './admin-audit';
import { Buckets } from './admin-buckets';
import { Grants } from './admin-grants';
import { IncreaseQueue } from './admin-increase-queue';
import { Policies } from './admin-policies';
import { Registrations } from './admin-registrations';

/** Operator quota administration: the queue first (it is what waits on people), then the books and configuration. */
export function QuotaAdminView() {
  return (
    <div className="space-y-6">
      <IncreaseQueue />
      <Buckets />
      <Grants />
      <Policies />
      <Registrations />
      <Audit />
    </div>
  );
}
