import { formatBytes, SANDBOX_SOURCE_LABELS, type SandboxBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Play, Square, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { CopyableId } from '../../components/CopyButton.tsx';
import { OpenPorts } from '../../components/OpenPorts.tsx';
import { Time } from '../../components/time.tsx';
import { CommandRunner } from './CommandRunner.tsx';
import { ObservedBadge, SandboxStateLine } from './SandboxState.tsx';

/** Start once it is (asked to be) stopped, Stop otherwise; nothing for a failed or deleted one. */
function lifecycleAction(sandbox: SandboxBody): 'stop' | 'start' | null {
  if (sandbox.status === 'failed' || sandbox.status === 'deleted' || sandbox.desiredStatus === 'deleted') return null;
  return sandbox.desiredStatus === 'stopped' || sandbox.status === 'stopped' ? 'start' : 'stop';
}

/** One sandbox: what it booted from, desired and observed state, stop/start, a command runner, delete. */
export function SandboxCard({ sandbox, environmentName }: { sandbox: SandboxBody; environmentName: string | null }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const lifecycle = useMutation({
    mutationFn: (action: 'stop' | 'start') => (action === 'stop' ? client.sandboxes.stop(sandbox.id) : client.sandboxes.start(sandbox.id)),
    onSuccess: (_, action) => toast.success(action === 'stop' ? 'Stopping the sandbox.' : 'Starting the sandbox.'),
    onError: (error, action) =>
      toast.error(action === 'stop' ? 'The sandbox was not stopped' : 'The sandbox was not started', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
  });
  const action = lifecycleAction(sandbox);
  const remove = useMutation({
    mutationFn: () => client.sandboxes.delete(sandbox.id),
    onSuccess: () => toast.success('Sandbox deleted.'),
    onError: (error) => toast.error('The sandbox was not deleted', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
  });
  return (
    <article className="rounded-lg border border-zinc-800 bg-zinc-900/60" aria-label={`Sandbox ${sandbox.id}`} data-testid="sandbox-card">
      {/* Two rows that never break mid-way: who it is with age and Delete, then what it booted from. */}
      <header className="space-y-1 border-b border-zinc-800 px-4 py-2.5 text-sm">
        <div className="flex items-center gap-2">
          <CopyableId value={sandbox.id} label="Copy sandbox id" className="min-w-0 shrink" />
          <ObservedBadge status={sandbox.status} />
          <span className="ml-auto shrink-0 whitespace-nowrap text-zinc-400">
            <Time iso={sandbox.createdAt} relative />
          </span>
          {action ? (
            <Button
              size="sm"
              className="shrink-0"
              onClick={() => lifecycle.mutate(action)}
              disabled={lifecycle.isPending}
              icon={action === 'stop' ? <Square aria-hidden className="size-3.5" /> : <Play aria-hidden className="size-3.5" />}
            >
              {action === 'stop' ? (lifecycle.isPending ? 'Stopping…' : 'Stop') : lifecycle.isPending ? 'Starting…' : 'Start'}
            </Button>
          ) : null}
          <Button
            size="sm"
            variant="ghost"
            className="shrink-0"
            onClick={() => setConfirmDelete(true)}
            disabled={remove.isPending}
            icon={<Trash2 aria-hidden className="size-3.5" />}
          >
            {remove.isPending ? 'Deleting…' : 'Delete'}
          </Button>
        </div>
        <div className="flex min-w-0 flex-wrap items-center gap-x-4 gap-y-1">
          <span className="text-zinc-300">
            <span className="text-zinc-400">Environment</span> {environmentName ?? '—'}
          </span>
          <SandboxStateLine desired={sandbox.desiredStatus} observed={sandbox.status} />
          <span className="text-zinc-300">
            <span className="text-zinc-400">Generation</span> <span className="font-mono">{sandbox.generation}</span>
          </span>
          {sandbox.sessionId ? (
            <span className="text-zinc-300">
              <span className="text-zinc-400">Session</span>{' '}
              <Link to={`/sessions/${sandbox.sessionId}`} className="font-mono text-xs text-teal-300 hover:text-teal-200">
                {sandbox.sessionId}
              </Link>
            </span>
          ) : null}
          {sandbox.egress ? (
            <span className="text-zinc-300" data-testid="sandbox-egress">
              <span className="text-zinc-400">Egress</span> {formatBytes(sandbox.egress.sentBytes)} out,{' '}
              {formatBytes(sandbox.egress.receivedBytes)} in
            </span>
          ) : null}
          <span className="flex min-w-0 items-center gap-1 text-zinc-300" data-testid="sandbox-image">
            <span className="shrink-0 text-zinc-400">Booted from</span>{' '}
            {sandbox.imageId ? (
              <>
                <span className="shrink-0">custom image</span> <CopyableId value={sandbox.imageId} label="Copy image id" />
              </>
            ) : (
              'the base configuration'
            )}
          </span>
          <span className="text-zinc-300" data-testid="sandbox-source">
            <span className="text-zinc-400">Source</span> {SANDBOX_SOURCE_LABELS[sandbox.source]}
            {sandbox.forkedFromId ? <span className="font-mono text-xs"> of {sandbox.forkedFromId}</span> : null}
          </span>
        </div>
      </header>
      <div className="space-y-3 p-4">
        {sandbox.failureReason ? <p className="text-sm text-red-300">{sandbox.failureReason}</p> : null}
        <CommandRunner target={{ kind: 'sandbox', id: sandbox.id }} ready={sandbox.status === 'running'} />
      </div>
      {sandbox.status === 'running' ? (
        <OpenPorts api={client.sandboxes.ports} ownerId={sandbox.id} queryKey={queryKeys.sandboxPorts(sandbox.id)} />
      ) : null}
      <ConfirmDialog
        open={confirmDelete}
        onOpenChange={setConfirmDelete}
        danger
        title="Delete this sandbox?"
        description="Its compute is destroyed along with anything not saved elsewhere."
        confirmLabel="Delete sandbox"
        onConfirm={() => remove.mutate()}
      />
    </article>
  );
}
