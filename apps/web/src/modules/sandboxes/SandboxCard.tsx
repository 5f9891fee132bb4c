import type { SandboxBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Trash2 } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { StatusBadge, type StatusTone } from '../../components/StatusBadge.tsx';
import { Time } from '../../components/time.tsx';
import { CommandRunner } from './CommandRunner.tsx';

const STATUS_TONE: Record<SandboxBody['status'], StatusTone> = {
  starting: 'running',
  running: 'active',
  paused: 'muted',
  lost: 'warning',
  failed: 'failed',
  deleted: 'neutral',
};

/** One sandbox: what it booted from, a command runner, delete. */
export function SandboxCard({ sandbox, environmentName }: { sandbox: SandboxBody; environmentName: string | null }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const remove = useMutation({
    mutationFn: () => client.sandboxes.delete(sandbox.id),
    onSuccess: () => toast.success('Sandbox deleted.'),
    onError: (error) => toast.error('The sandbox was not deleted', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
  });
  return (
    <article className="rounded-lg border border-zinc-800 bg-zinc-900/60" aria-label={`Sandbox ${sandbox.id}`} data-testid="sandbox-card">
      <header className="flex flex-wrap items-center justify-between gap-2 border-b border-zinc-800 px-4 py-2.5">
        <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1 text-sm">
          <span className="font-mono text-xs text-zinc-200">{sandbox.id}</span>
          <StatusBadge tone={STATUS_TONE[sandbox.status]}>{sandbox.status}</StatusBadge>
          <span className="text-zinc-300">
            <span className="text-zinc-400">Environment</span> {environmentName ?? '—'}
          </span>
          <span className="text-zinc-300" data-testid="sandbox-image">
            <span className="text-zinc-400">Booted from</span>{' '}
            {sandbox.imageId ? (
              <>
                custom image <span className="font-mono text-xs">{sandbox.imageId}</span>
              </>
            ) : (
              'the base configuration'
            )}
          </span>
          <span className="text-zinc-400">
            <Time iso={sandbox.createdAt} relative />
          </span>
        </div>
        <Button
          size="sm"
          variant="ghost"
          onClick={() => setConfirmDelete(true)}
          disabled={remove.isPending}
          icon={<Trash2 aria-hidden className="size-3.5" />}
        >
          {remove.isPending ? 'Deleting…' : 'Delete'}
        </Button>
      </header>
      <div className="space-y-3 p-4">
        {sandbox.failureReason ? <p className="text-sm text-red-300">{sandbox.failureReason}</p> : null}
        <CommandRunner sandbox={sandbox} />
      </div>
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
