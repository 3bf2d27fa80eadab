'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldMessage, invalidProps } from '@/components/ui/errors';
import { Alert, Button, Field, Input } from '@/components/ui/primitives';

/**
 * Registers a cluster on this network. The nodes' token is returned once: it is shown here until
 * dismissed (then the form is empty again) and is not kept anywhere else in the console. Changing
 * the name clears the last attempt's error.
 */
export function RegisterClusterForm({ project, network }: { project: string; network: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<{ cluster: string; secret: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const create = useMutation(
    trpc.cni.clusters.create.mutationOptions({
      onSuccess: (c) => {
        void queryClient.invalidateQueries({ queryKey: trpc.cni.pathKey() });
        setName('');
        setCopied(false);
        setIssued(c.token ? { cluster: c.name, secret: c.token.secret } : null);
      },
    }),
  );
  const err = create.error;
  const nameError = fieldMessage(err, 'name');

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setIssued(null);
    create.mutate({ project, network, name: name.trim() });
  }

  if (issued) {
    return (
      <div className="space-y-3" data-testid="cluster-token">
        <Alert tone="green" testId="cluster-registered">
          Cluster <strong>{issued.cluster}</strong> registered on {network}.
        </Alert>
        <div className="space-y-1">
          <label htmlFor="cluster-token-secret" className="block text-sm font-medium text-slate-700">
            Node token
          </label>
          <div className="flex gap-2">
            <Input id="cluster-token-secret" readOnly value={issued.secret} className="font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
            <Button
              type="button"
              variant="secondary"
              onClick={() => {
                void navigator.clipboard?.writeText(issued.secret).then(() => setCopied(true));
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </Button>
          </div>
          <p className="text-xs text-amber-800">
            Shown once: store it now in the token file (<code className="font-mono">tokenFile</code>) on each node of the cluster. It cannot be shown again.
          </p>
        </div>
        <Button
          type="button"
          variant="secondary"
          className="w-full"
          onClick={() => {
            setIssued(null);
            setName('');
            create.reset();
          }}
        >
          Done
        </Button>
      </div>
    );
  }

  return (
    <form onSubmit={onSubmit} className="space-y-4" aria-label="Register cluster">
      <Field label="Cluster name" htmlFor="cluster-name" error={nameError} hint="Lower-case letters, digits and dashes">
        <Input
          id="cluster-name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            if (create.error) create.reset();
          }}
          placeholder="prod-k8s"
          required
          autoComplete="off"
          {...invalidProps(nameError, 'cluster-name')}
        />
      </Field>
      <Field label="Network" htmlFor="cluster-network" hint="Pods of this cluster get their addresses from this network's pools.">
        <Input id="cluster-network" value={network} readOnly disabled />
      </Field>
      {err && !nameError && <Alert testId="register-cluster-error">{errorMessage(err)}</Alert>}
      <Button type="submit" disabled={create.isPending || !name.trim()} className="w-full">
        {create.isPending ? 'Registering…' : 'Register cluster'}
      </Button>
    </form>
  );
}
