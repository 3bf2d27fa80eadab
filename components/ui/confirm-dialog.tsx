'use client';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button } from '@/components/ui/primitives';

/**
 * The native <dialog> every modal of the console is: opened on mount (focus trapped), closed on
 * unmount, Escape cancels unless the action is running. `children` receives the title heading,
 * to place where the dialog's layout wants it.
 */
export function ModalDialog({
  title,
  pending = false,
  onCancel,
  children,
}: {
  title: string;
  pending?: boolean;
  onCancel: () => void;
  children: (heading: ReactNode) => ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!pending) onCancel();
      }}
      className="m-auto w-full max-w-md rounded-lg border border-slate-200 bg-white p-0 shadow-xl backdrop:bg-slate-900/40"
    >
      {children(
        <h2 id={titleId} className="text-base font-semibold text-slate-900">
          {title}
        </h2>,
      )}
    </dialog>
  );
}

/**
 * A modal confirmation. Mount it when the question is asked; it stays open while the action runs
 * and shows the action's error, so a refusal (e.g. "network is in use") is read where the user is
 * looking.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  tone = 'danger',
  onConfirm,
  onCancel,
  pending = false,
  error,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** `danger` for destructive actions (the default), `primary` otherwise. */
  tone?: 'danger' | 'primary';
  onConfirm: () => void;
  onCancel: () => void;
  pending?: boolean;
  error?: string | null;
}) {
  return (
    <ModalDialog title={title} pending={pending} onCancel={onCancel}>
      {(heading) => (
        <>
          <div className="space-y-3 p-5">
            {heading}
            <div className="text-sm text-slate-700">{children}</div>
            {error && <Alert testId="confirm-error">{error}</Alert>}
          </div>
          <div className="flex justify-end gap-2 rounded-b-lg border-t border-slate-100 bg-slate-50 px-5 py-3">
            <Button variant="secondary" onClick={onCancel} disabled={pending} autoFocus>
              Cancel
            </Button>
            <Button variant={tone} onClick={onConfirm} disabled={pending}>
              {pending ? 'Working…' : confirmLabel}
            </Button>
          </div>
        </>
      )}
    </ModalDialog>
  );
}

/** A question for `useConfirm`: what the dialog says, and the action it runs when confirmed. */
export type Confirmation = {
  title: string;
  /** What will happen, in a sentence or two: who loses what, and whether it can be undone. */
  body: ReactNode;
  confirmLabel: string;
  tone?: 'danger' | 'primary';
  /** The action; the dialog stays open (showing the refusal) if it rejects, and closes when it resolves. */
  run: () => Promise<unknown>;
};

/**
 * One confirmation dialog for a view's destructive or privilege-changing actions: `ask(question)`
 * opens it; render `dialog` anywhere in the view. Every such action goes through here, so none
 * happens on one click.
 */
export function useConfirm(): { ask: (question: Confirmation) => void; dialog: ReactNode } {
  const [question, setQuestion] = useState<Confirmation | null>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const dialog = question && (
    <ConfirmDialog
      title={question.title}
      confirmLabel={question.confirmLabel}
      tone={question.tone}
      pending={pending}
      error={error}
      onCancel={() => setQuestion(null)}
      onConfirm={() => {
        setPending(true);
        setError(null);
        question
          .run()
          .then(() => setQuestion(null))
          .catch((e: unknown) => setError(errorMessage(e)))
          .finally(() => setPending(false));
      }}
    >
      {question.body}
    </ConfirmDialog>
  );
  return {
    ask: (q) => {
      setError(null);
      setQuestion(q);
    },
    dialog,
  };
}
