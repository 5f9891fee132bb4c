import type { EnvironmentBody, SandboxTarget } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Save, Trash2 } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage, fieldErrors } from '../api/errors.ts';
import { useEnvironment, useTargets } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Breadcrumb } from '../components/Breadcrumb.tsx';
import { Button } from '../components/Button.tsx';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { CopyableId } from '../components/CopyButton.tsx';
import { Section } from '../components/Section.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { CustomImagePanel } from '../modules/custom-image/CustomImagePanel.tsx';
import { ConfigForm } from '../modules/environments/ConfigForm.tsx';
import { HostNetworkWarning } from '../modules/environments/HostNetworkWarning.tsx';
import type { JsonSchema } from '../modules/environments/json-schema.ts';
import { RevisionHistory } from '../modules/environments/RevisionHistory.tsx';
import { SpecEditor } from '../modules/environments/SpecEditor.tsx';
import { WarmPoolPanel } from '../modules/warm-pool/WarmPoolPanel.tsx';

function ConfigEditor({ environment, target }: { environment: EnvironmentBody; target: SandboxTarget | undefined }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [config, setConfig] = useState<Record<string, unknown>>(environment.config);
  const [dirty, setDirty] = useState(false);
  const save = useMutation({
    mutationFn: () => client.environments.update(environment.id, { config }),
    onSuccess: (answer) => {
      setDirty(false);
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      void queryClient.invalidateQueries({ queryKey: queryKeys.customImage(environment.id) });
      const reconciliation = answer.customImageReconciliation;
      if (reconciliation?.action === 'detached')
        toast.warning(`Saved as revision #${answer.currentRevision.number}`, {
          description:
            'The boot source changed, so the custom image was detached: runs use the base configuration until you relink or capture again.',
        });
      else toast.success(`Saved as revision #${answer.currentRevision.number}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Configuration" noValidate>
      <Section
        id="configuration"
        title="Configuration"
        description={target ? `${target.displayName} settings. Saving a change inserts a new revision.` : undefined}
        actions={
          <Button type="submit" variant="primary" disabled={!dirty || save.isPending} icon={<Save aria-hidden className="size-4" />}>
            {save.isPending ? 'Saving…' : 'Save'}
          </Button>
        }
      >
        {!target ? (
          <p className="text-sm text-zinc-300">
            The provider “{environment.provider}” is not registered on this server, so its settings cannot be edited here.
          </p>
        ) : (
          <div className="space-y-3">
            {!target.available ? (
              <p className="text-sm text-amber-200">This provider is unavailable here: {target.unavailableReason}</p>
            ) : null}
            <ConfigForm
              schema={target.configSchema as JsonSchema}
              value={config}
              onChange={(next) => {
                setConfig(next);
                setDirty(true);
                if (save.isError) save.reset();
              }}
              errors={save.isError ? fieldErrors(save.error, 'config') : {}}
            />
            <HostNetworkWarning config={config} />
          </div>
        )}
        {save.isError ? (
          <div className="mt-3">
            <ErrorState title="Not saved" error={save.error} />
          </div>
        ) : null}
      </Section>
    </form>
  );
}

export function EnvironmentPage() {
  const { id = '' } = useParams();
  const environment = useEnvironment(id);
  const targets = useTargets();
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const remove = useMutation({
    mutationFn: () => client.environments.delete(id),
    onSuccess: (env) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      toast.success(`Environment ${env.name} deleted.`);
      navigate('/environments');
    },
    onError: (error) => toast.error('The environment was not deleted', { description: errorMessage(error) }),
  });

  if (environment.isPending) return <Skeleton lines={6} label="Loading environment" />;
  if (environment.isError)
    return <ErrorState error={environment.error} onRetry={() => environment.refetch()} title="Could not load the environment" />;
  const env = environment.data;
  const target = targets.data?.find((t) => t.provider === env.provider);
  const providerName = target?.displayName ?? env.provider;
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <Breadcrumb to="/environments" label="Environments" />
          <h1 className="text-xl font-semibold text-white">{env.name}</h1>
          <p className="mt-0.5 flex flex-wrap gap-x-4 text-sm text-zinc-300">
            <span>
              <span className="text-zinc-400">Provider</span> {providerName}
            </span>
            <span>
              <span className="text-zinc-400">Revision</span> <span className="font-mono">#{env.currentRevision.number}</span>
            </span>
            <CopyableId value={env.id} label="Copy environment id" />
          </p>
        </div>
        <Button variant="ghost" onClick={() => setConfirmDelete(true)} icon={<Trash2 aria-hidden className="size-4" />}>
          Delete
        </Button>
      </div>
      {targets.isPending ? (
        <Skeleton label="Loading provider" />
      ) : (
        <ConfigEditor key={env.currentRevision.id} environment={env} target={target} />
      )}
      <SpecEditor key={`spec-${env.currentRevision.id}`} environment={env} />
      <CustomImagePanel environment={env} providerName={providerName} />
      <WarmPoolPanel environmentId={env.id} />
      <RevisionHistory environmentId={env.id} currentRevisionId={env.currentRevision.id} />
      <ConfirmDialog
        open={confirmDelete}
        onOpenChange={setConfirmDelete}
        danger
        title={`Delete ${env.name}?`}
        description="The environment and its revisions are removed. Sandboxes already running keep their pinned configuration."
        confirmLabel="Delete environment"
        onConfirm={() => remove.mutate()}
      />
    </div>
  );
}
