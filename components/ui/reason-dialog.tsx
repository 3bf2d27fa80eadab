'use client';
import { useId, useState, type ReactNode } from 'react';
import { ModalDialog } from '@/components/ui/confirm-dialog';
import { Alert, Button } from '@/components/ui/primitives';

/**
 * A modal that asks for a reason before an audited action (a ModalDialog). With `required`, the action stays disabled until a reason is typed. It stays open while
 * the action runs and shows the action's error where the user is looking.
 */
export function ReasonDialog({
  title,
  children,
  confirmLabel,
  fieldLabel = 'Reason',
  tone = 'danger',
  required = true,
  placeholder,
  pending = false,
  error,
  onConfirm,
  onCancel,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  /** What the text is called (a reason, a note). */
  fieldLabel?: string;
  tone?: 'danger' | 'primary';
  required?: boolean;
  placeholder?: string;
  pending?: boolean;
  error?: string | null;
  onConfirm: (reason: string) => void;
  onCancel: () => void;
}) {
  const reasonId = useId();
  const [reason, setReason] = useState('');
  const missing = required && reason.trim() === '';
  return (
    <ModalDialog title={title} pending={pending} onCancel={onCancel}>
      {(heading) => (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!missing) onConfirm(reason.trim());
          }}
        >
          <div className="space-y-3 p-5">
            {heading}
            {children && <div className="text-sm text-slate-700">{children}</div>}
            <div className="space-y-1">
              <label htmlFor={reasonId} className="block text-sm font-medium text-slate-700">
                {fieldLabel}
                {required ? '' : ' (optional)'}
              </label>
              <textarea
                id={reasonId}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                maxLength={500}
                rows={3}
                required={required}
                autoFocus
                placeholder={placeholder}
                className="block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm shadow-sm focus:border-brand-500"
              />
              <p className="text-xs text-slate-500">{required ? 'Required. ' : ''}Recorded in the audit log with your name.</p>
            </div>
            {error && <Alert testId="reason-error">{error}</Alert>}
          </div>
          <div className="flex justify-end gap-2 rounded-b-lg border-t border-slate-100 bg-slate-50 px-5 py-3">
            <Button type="button" variant="secondary" onClick={onCancel} disabled={pending}>
              Cancel
            </Button>
            <Button type="submit" variant={tone} disabled={pending || missing}>
              {pending ? 'Working…' : confirmLabel}
            </Button>
          </div>
        </form>
      )}
    </ModalDialog>
  );
}
