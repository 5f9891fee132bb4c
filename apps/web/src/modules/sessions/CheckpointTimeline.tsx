import { type CheckpointBody, formatBytes } from '@sandcast/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { History, Save } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { EmptyState, ErrorState, Skeleton, Spinner } from '../../components/States.tsx';
import { Time } from '../../components/time.tsx';

const TRIGGER_WORDS: Record<CheckpointBody['trigger'], string> = {
  auto: 'after an operation',
  manual: 'checkpoint now',
  idle: 'before an idle stop',
};

/**
 * The checkpoints of a checkpointed session's workspace, newest first: when, why, how many paths
 * changed and what it stored; "Checkpoint now", and Restore behind a confirmation (files written
 * since are gone). Both disable every button while they run.
 */
export function CheckpointTimeline({ sessionId, canUse }: { sessionId: string; canUse: boolean }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: queryKeys.sessionCheckpoints(sessionId), queryFn: () => client.sessions.checkpoints(sessionId) });
  const [restoring, setRestoring] = useState<CheckpointBody | null>(null);
  const [phase, setPhase] = useState<string | null>(null);
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: queryKeys.sessionCheckpoints(sessionId) }),
      queryClient.invalidateQueries({ queryKey: queryKeys.sessionSandbox(sessionId), exact: true }),
    ]);
  const take = useMutation({
    mutationFn: () => client.sessions.checkpoint(sessionId),
    onSuccess: ({ checkpoint }) =>
      toast.success('Checkpoint taken', {
        description: `${checkpoint.changedPaths} changed paths, ${formatBytes(checkpoint.storedBytes)} stored`,
      }),
    onError: (error) => toast.error('No checkpoint was taken', { description: errorMessage(error) }),
    onSettled: refresh,
  });
  const restore = useMutation({
    mutationFn: (checkpoint: CheckpointBody) => client.sessions.restore(sessionId, checkpoint.id, { onProgress: (p) => setPhase(p.phase) }),
    onSuccess: ({ checkpoint }) => toast.success('Workspace restored', { description: `to the checkpoint ${checkpoint.id}` }),
    onError: (error) => toast.error('The workspace was not restored', { description: errorMessage(error) }),
    onSettled: () => {
      setPhase(null);
      return refresh();
    },
  });
  const busy = take.isPending || restore.isPending;

  return (
    <div className="space-y-3 border-t border-zinc-800 pt-4" data-testid="checkpoint-timeline">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div>
          <h3 className="text-sm font-semibold text-zinc-50">Checkpoints</h3>
          <p className="text-xs text-zinc-400">
            Taken after every command and file write; a replacement of the compute restores the current one.
            {list.data ? ` The newest ${list.data.retention} are kept.` : ''}
          </p>
        </div>
        <Button
          variant="secondary"
          disabled={!canUse || busy}
          onClick={() => take.mutate()}
          icon={take.isPending ? <Spinner /> : <Save aria-hidden className="size-4" />}
          title={canUse ? undefined : 'The sandbox must be running in an active session.'}
        >
          {take.isPending ? 'Checkpointing…' : 'Checkpoint now'}
        </Button>
      </div>
      {restore.isPending ? (
        <p className="flex items-center gap-2 text-sm text-zinc-300" role="status">
          <Spinner /> Restoring {restore.variables?.id}… {phase ?? ''}
        </p>
      ) : null}
      {list.isPending ? (
        <Skeleton lines={3} label="Loading checkpoints" />
      ) : list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} title="The checkpoints could not be loaded" />
      ) : list.data.checkpoints.length === 0 ? (
        <EmptyState message="No checkpoints yet — run a command or write a file, or take one now." />
      ) : (
        <DataTable label="Checkpoints" columns={['Taken', 'Trigger', 'Changed paths', 'Stored', 'Workspace', '']} size="section">
          {list.data.checkpoints.map((checkpoint) => (
            <tr key={checkpoint.id} data-testid={`checkpoint-${checkpoint.id}`}>
              <td>
                <Time iso={checkpoint.createdAt} relative /> <span className="font-mono text-xs text-zinc-400">{checkpoint.id}</span>
              </td>
              <td>{TRIGGER_WORDS[checkpoint.trigger]}</td>
              <td className="font-mono">{checkpoint.changedPaths}</td>
              <td className="font-mono">{formatBytes(checkpoint.storedBytes)}</td>
              <td className="font-mono">
                {formatBytes(checkpoint.totalBytes)} · {checkpoint.fileCount} files
              </td>
              <td>
                {checkpoint.current ? (
                  <span className="text-xs text-teal-300">current</span>
                ) : (
                  <Button
                    variant="secondary"
                    disabled={!canUse || busy}
                    onClick={() => setRestoring(checkpoint)}
                    icon={<History aria-hidden className="size-4" />}
                    aria-label={`Restore ${checkpoint.id}`}
                  >
                    Restore
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ConfirmDialog
        open={restoring !== null}
        onOpenChange={(open) => {
          if (!open) setRestoring(null);
        }}
        danger
        title="Restore this checkpoint?"
        description={
          restoring ? (
            <>
              The workspace goes back to how it was <Time iso={restoring.createdAt} relative />: files written since are gone. Running
              processes keep running.
            </>
          ) : null
        }
        confirmLabel="Restore"
        onConfirm={() => {
          if (restoring) restore.mutate(restoring);
          setRestoring(null);
        }}
      />
    </div>
  );
}
