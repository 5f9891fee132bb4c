import type { ExecExitFrame } from '@sandcast/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { Play, Square } from 'lucide-react';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useClient } from '../../api/client-context.tsx';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorState, Spinner } from '../../components/States.tsx';
import { Elapsed } from '../../components/time.tsx';

/** The page keeps the tail of a long output; the command itself is never cut short by this. */
const SHOWN_OUTPUT_CHARS = 256 * 1024;

interface Segment {
  stream: 'stdout' | 'stderr';
  text: string;
}

interface Run {
  command: string;
  startedAt: number;
  segments: Segment[];
  /** Characters of earlier output no longer shown. */
  dropped: number;
  exit: ExecExitFrame | null;
  error: unknown;
  stopped: boolean;
}

function append(run: Run, stream: Segment['stream'], text: string): Run {
  const last = run.segments.at(-1);
  const segments =
    last?.stream === stream ? [...run.segments.slice(0, -1), { stream, text: last.text + text }] : [...run.segments, { stream, text }];
  let size = segments.reduce((sum, s) => sum + s.text.length, 0);
  let dropped = run.dropped;
  while (size > SHOWN_OUTPUT_CHARS && segments.length > 0) {
    const first = segments[0]!;
    const cut = Math.min(first.text.length, size - SHOWN_OUTPUT_CHARS);
    dropped += cut;
    size -= cut;
    if (cut === first.text.length) segments.shift();
    else segments[0] = { stream: first.stream, text: first.text.slice(cut) };
  }
  return { ...run, segments, dropped };
}

/** Where a command runs: a sandbox by its id, or a session's primary sandbox by the session's id. */
export interface ExecTarget {
  kind: 'sandbox' | 'session';
  id: string;
}

/** Runs a command in a sandbox and shows its output as it arrives; Stop kills it. */
export function CommandRunner({ target, ready }: { target: ExecTarget /** The sandbox can run commands now. */; ready: boolean }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const inputId = useId();
  const [command, setCommand] = useState('');
  const [run, setRun] = useState<Run | null>(null);
  const controller = useRef<AbortController | null>(null);
  // Leaving the page ends the request; the server then kills the command.
  useEffect(() => () => controller.current?.abort(), []);
  const running = run !== null && run.exit === null && run.error === null && !run.stopped;

  const start = async (event: FormEvent) => {
    event.preventDefault();
    if (!command.trim() || running) return;
    const abort = new AbortController();
    controller.current = abort;
    const update = (change: (r: Run) => Run) => setRun((r) => (r && controller.current === abort ? change(r) : r));
    setRun({ command, startedAt: Date.now(), segments: [], dropped: 0, exit: null, error: null, stopped: false });
    try {
      const api = target.kind === 'sandbox' ? client.sandboxes : client.sessions;
      const exit = await api
        .execStream(target.id, { command: ['sh', '-lc', command] }, { signal: abort.signal })
        .onStdout((text) => update((r) => append(r, 'stdout', text)))
        .onStderr((text) => update((r) => append(r, 'stderr', text)))
        .done();
      update((r) => ({ ...r, exit }));
    } catch (error) {
      update((r) => (abort.signal.aborted ? { ...r, stopped: true } : { ...r, error }));
    } finally {
      // A session command may have taken a checkpoint or recovered the sandbox: its views refetch.
      if (target.kind === 'session') void queryClient.invalidateQueries({ queryKey: queryKeys.sessionSandbox(target.id) });
    }
  };

  return (
    <>
      <form onSubmit={start} className="flex gap-2">
        <label htmlFor={inputId} className="sr-only">
          Command to run in {target.id}
        </label>
        <input
          id={inputId}
          value={command}
          onChange={(e) => setCommand(e.target.value)}
          placeholder="Run a command, e.g. ls -la /"
          spellCheck={false}
          className="min-w-0 flex-1 rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 font-mono text-sm text-zinc-100 placeholder:text-zinc-500"
        />
        {running ? (
          <Button type="button" onClick={() => controller.current?.abort()} icon={<Square aria-hidden className="size-4" />}>
            Stop
          </Button>
        ) : null}
        <Button
          type="submit"
          variant="primary"
          disabled={running || !command.trim() || !ready}
          icon={running ? <Spinner /> : <Play aria-hidden className="size-4" />}
        >
          Run
        </Button>
      </form>
      {running ? (
        <p className="flex items-center gap-2 text-sm text-zinc-300" role="status">
          Running… <Elapsed since={run.startedAt} />
        </p>
      ) : null}
      {run?.error ? <ErrorState title="The command did not run" error={run.error} /> : null}
      {run && !run.error ? (
        <div className="rounded-md border border-zinc-800 bg-zinc-950" data-testid="exec-output">
          <div className="flex flex-wrap items-center gap-3 border-b border-zinc-800 px-3 py-1.5 text-xs">
            <code className="font-mono text-zinc-300">$ {run.command}</code>
            {run.exit ? (
              <span className={run.exit.exitCode === 0 ? 'text-emerald-300' : 'text-red-300'}>exit {run.exit.exitCode}</span>
            ) : null}
            {run.exit?.timedOut ? <span className="text-amber-300">timed out</span> : null}
            {run.stopped ? <span className="text-amber-300">stopped</span> : null}
          </div>
          <pre className="max-h-72 overflow-auto p-3 font-mono text-xs whitespace-pre-wrap text-zinc-100" aria-live="polite">
            {run.dropped > 0 ? (
              <span className="text-zinc-400">
                ({run.dropped.toLocaleString()} earlier characters not shown){'\n'}
              </span>
            ) : null}
            {run.segments.map((segment, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: segments only ever grow at the end
              <span key={i} className={segment.stream === 'stderr' ? 'text-red-300' : undefined}>
                {segment.text}
              </span>
            ))}
            {run.segments.length === 0 && run.exit ? <span className="text-zinc-400">(no output)</span> : null}
          </pre>
        </div>
      ) : null}
    </>
  );
}
