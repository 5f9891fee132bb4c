import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Archive } from 'lucide-react';
import { useState } from 'react';
import { useParams } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { useAgent } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Breadcrumb } from '../components/Breadcrumb.tsx';
import { Button } from '../components/Button.tsx';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { CopyableId } from '../components/CopyButton.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { AgentForm } from '../modules/agents/AgentForm.tsx';
import { useRevisionCatalog } from '../modules/agents/revision-catalog.ts';
import { VersionHistory } from '../modules/agents/VersionHistory.tsx';

export function AgentCreatePage() {
  return (
    <div className="space-y-5">
      <div>
        <Breadcrumb to="/agents" label="Agents" />
        <h1 className="text-xl font-semibold text-white">Create agent</h1>
      </div>
      <AgentForm />
    </div>
  );
}

export function AgentPage() {
  const { id = '' } = useParams();
  const agent = useAgent(id);
  const catalog = useRevisionCatalog();
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirmArchive, setConfirmArchive] = useState(false);
  const archive = useMutation({
    mutationFn: () => client.agents.archive(id),
    onSuccess: (archived) => toast.success(`Agent ${archived.name} archived`, { description: 'It starts no new sessions.' }),
    onError: (error) => toast.error('The agent was not archived', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.agents }),
  });
  if (agent.isPending) return <Skeleton lines={6} label="Loading agent" />;
  if (agent.isError) return <ErrorState error={agent.error} onRetry={() => agent.refetch()} title="Could not load the agent" />;
  const a = agent.data;
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <Breadcrumb to="/agents" label="Agents" />
          <h1 className="flex items-center gap-2 text-xl font-semibold text-white">
            {a.name} {a.archivedAt ? <StatusBadge tone="muted">archived</StatusBadge> : null}
          </h1>
          <p className="mt-0.5 flex flex-wrap gap-x-4 text-sm text-zinc-300">
            {a.displayName ? <span>{a.displayName}</span> : null}
            <span>
              <span className="text-zinc-400">Version</span> <span className="font-mono">v{a.currentVersion.number}</span>
            </span>
            <CopyableId value={a.id} label="Copy agent id" />
          </p>
        </div>
        {a.archivedAt ? null : (
          <Button
            variant="ghost"
            onClick={() => setConfirmArchive(true)}
            disabled={archive.isPending}
            icon={<Archive aria-hidden className="size-4" />}
          >
            {archive.isPending ? 'Archiving…' : 'Archive'}
          </Button>
        )}
      </div>
      {a.archivedAt ? (
        <p className="rounded-md border border-zinc-700 bg-zinc-900 p-3 text-sm text-zinc-300">
          This agent is archived: it starts no new sessions. Its versions and sessions stay readable.
        </p>
      ) : (
        <AgentForm key={a.currentVersion.id} agent={a} />
      )}
      <VersionHistory agentId={a.id} currentVersionId={a.currentVersion.id} catalog={catalog} />
      <ConfirmDialog
        open={confirmArchive}
        onOpenChange={setConfirmArchive}
        danger
        title={`Archive ${a.name}?`}
        description="The agent starts no new sessions. Sessions already running keep their sandbox; its versions and sessions stay readable."
        confirmLabel="Archive agent"
        onConfirm={() => archive.mutate()}
      />
    </div>
  );
}
