import type { ExecResultBody, SandboxBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Play, Trash2 } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { ErrorState, Spinner } from '../../components/States.tsx';
import { StatusBadge, type StatusTone } from '../../components/StatusBadge.tsx';
import { Elapsed, Time } from '../../components/time.tsx';
import { SandboxPorts } from './SandboxPorts.tsx';

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
  const inputId = useId();
  const [command, setCommand] = useState('');
  const [result, setResult] = useState<(ExecResultBody & { command: string }) | null>(null);
  const [startedAt, setStartedAt] = useState(0);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const exec = useMutation({
    mutationFn: (cmd: string) => client.sandboxes.exec(sandbox.id, { command: ['sh', '-lc', cmd] }),
    onSuccess: (answer, cmd) => setResult({ ...answer, command: cmd }),
  });
  const remove = useMutation({
    mutationFn: () => client.sandboxes.delete(sandbox.id),
    onSuccess: () => toast.success('Sandbox deleted.'),
    onError: (error) => toast.error('The sandbox was not deleted', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
  });
  const run = (event: FormEvent) => {
    event.preventDefault();
    if (!command.trim()) return;
    setStartedAt(Date.now());
    exec.mutate(command);
  };
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
        <form onSubmit={run} className="flex gap-2">
          <label htmlFor={inputId} className="sr-only">
            Command to run in {sandbox.id}
          </label>
          <input
            id={inputId}
            value={command}
            onChange={(e) => setCommand(e.target.value)}
            placeholder="Run a command, e.g. ls -la /"
            spellCheck={false}
            className="min-w-0 flex-1 rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 font-mono text-sm text-zinc-100 placeholder:text-zinc-500"
          />
          <Button
            type="submit"
            variant="primary"
            disabled={exec.isPending || !command.trim() || sandbox.status !== 'running'}
            icon={exec.isPending ? <Spinner /> : <Play aria-hidden className="size-4" />}
          >
            Run
          </Button>
        </form>
        {exec.isPending ? (
          <p className="flex items-center gap-2 text-sm text-zinc-300" role="status">
            Running… <Elapsed since={startedAt} />
          </p>
        ) : null}
        {exec.isError ? <ErrorState title="The command did not run" error={exec.error} /> : null}
        {result ? (
          <div className="rounded-md border border-zinc-800 bg-zinc-950" data-testid="exec-output">
            <div className="flex flex-wrap items-center gap-3 border-b border-zinc-800 px-3 py-1.5 text-xs">
              <code className="font-mono text-zinc-300">$ {result.command}</code>
              <span className={result.exitCode === 0 ? 'text-emerald-300' : 'text-red-300'}>exit {result.exitCode}</span>
              {result.timedOut ? <span className="text-amber-300">timed out</span> : null}
            </div>
            <pre className="max-h-72 overflow-auto p-3 font-mono text-xs whitespace-pre-wrap text-zinc-100">
              {result.stdout}
              {result.stderr ? <span className="text-red-300">{result.stderr}</span> : null}
              {!result.stdout && !result.stderr ? <span className="text-zinc-400">(no output)</span> : null}
            </pre>
          </div>
        ) : null}
      </div>
      {sandbox.status === 'running' ? <SandboxPorts sandboxId={sandbox.id} /> : null}
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
