import { formatBytes } from '@sandcast/contracts';
import { useQuery } from '@tanstack/react-query';
import { AlertTriangle, FileDiff, RotateCw } from 'lucide-react';
import { useCallback, useEffect, useRef } from 'react';
import { useClient } from '../../api/client-context.tsx';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorState, Skeleton } from '../../components/States.tsx';

const KIND_CLASS = { added: 'text-emerald-300', modified: 'text-sky-300', deleted: 'text-red-300' } as const;
const KIND_MARK = { added: '+', modified: '~', deleted: '−' } as const;

export function useSetupChanges(sessionId: string, enabled: boolean) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.setupChanges(sessionId), queryFn: () => client.customImages.changes(sessionId), enabled });
}

/** How long the terminal must stay quiet before the review asks for the changes again. */
const QUIET_MS = 1200;

/**
 * A trigger to call on every burst of activity: `refresh` runs once activity has been quiet for
 * `QUIET_MS`, so a long install asks for the list once at its end, not per line of output.
 */
export function useQuietRefresh(refresh: () => void, enabled: boolean): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refreshRef = useRef(refresh);
  refreshRef.current = refresh;
  const enabledRef = useRef(enabled);
  enabledRef.current = enabled;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      if (enabledRef.current) refreshRef.current();
    }, QUIET_MS);
  }, []);
}

/** Refreshes when the window comes back into focus or view (the operator worked elsewhere). */
function useRefreshOnReturn(refresh: () => void, enabled: boolean) {
  const refreshRef = useRef(refresh);
  refreshRef.current = refresh;
  useEffect(() => {
    if (!enabled) return;
    const onFocus = () => refreshRef.current();
    const onVisible = () => {
      if (document.visibilityState === 'visible') refreshRef.current();
    };
    window.addEventListener('focus', onFocus);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      window.removeEventListener('focus', onFocus);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [enabled]);
}

/** What the capture would bake into the image: changed paths, and likely secrets to look at first. */
export function CaptureReview({ sessionId, enabled }: { sessionId: string; enabled: boolean }) {
  const changes = useSetupChanges(sessionId, enabled);
  useRefreshOnReturn(() => void changes.refetch(), enabled);
  return (
    <div className="rounded-md border border-zinc-800" data-testid="capture-review">
      <div className="flex items-center justify-between gap-2 border-b border-zinc-800 px-3 py-2">
        <h3 className="flex items-center gap-2 text-sm font-medium text-zinc-100">
          <FileDiff aria-hidden className="size-4 text-zinc-400" /> Capture review
        </h3>
        <Button
          size="sm"
          variant="ghost"
          onClick={() => void changes.refetch()}
          disabled={!enabled || changes.isFetching}
          icon={<RotateCw aria-hidden className={`size-3.5 ${changes.isFetching ? 'animate-spin' : ''}`} />}
        >
          Refresh list
        </Button>
      </div>
      <div className="p-3">
        {!enabled && !changes.data ? (
          <p className="text-sm text-zinc-400">The list of changed files appears once the setup sandbox is running.</p>
        ) : changes.isPending ? (
          <Skeleton lines={3} label="Loading changed files" />
        ) : changes.isError ? (
          <ErrorState error={changes.error} onRetry={() => changes.refetch()} title="Could not list the changes" />
        ) : (
          <div className="space-y-3">
            {changes.data.warnings.length ? (
              <div role="alert" className="rounded-md border border-amber-800 bg-amber-950/50 p-2.5 text-sm" data-testid="capture-warnings">
                <p className="flex items-center gap-1.5 font-medium text-amber-200">
                  <AlertTriangle aria-hidden className="size-4" /> Likely secrets would be captured into the image
                </p>
                <ul className="mt-1 space-y-0.5">
                  {changes.data.warnings.map((w) => (
                    <li key={`${w.path}:${w.line ?? ''}:${w.reason}`} className="text-amber-100">
                      <code className="font-mono text-xs">
                        {w.path}
                        {w.line === undefined ? '' : `:${w.line}`}
                      </code>{' '}
                      — {w.reason}
                    </li>
                  ))}
                </ul>
                <p className="mt-1 text-amber-100/90">
                  Remove them in the terminal before you click Finished if runs should not carry them.
                </p>
              </div>
            ) : null}
            {changes.data.changes.length === 0 ? (
              <p className="text-sm text-zinc-400">
                No files changed yet. Anything you install or configure in the terminal shows up here.
              </p>
            ) : (
              <>
                <p className="text-xs text-zinc-400">
                  {changes.data.changes.length} path{changes.data.changes.length === 1 ? '' : 's'} changed ·{' '}
                  {formatBytes(changes.data.totalBytes, '—')}
                  {changes.data.truncated ? ' · list cut at the limit' : ''}
                </p>
                <ul className="max-h-56 overflow-auto font-mono text-xs" aria-label="Changed files">
                  {changes.data.changes.map((c) => (
                    <li key={c.path} className="flex gap-2 py-0.5">
                      <span aria-hidden className={`w-3 ${KIND_CLASS[c.kind]}`}>
                        {KIND_MARK[c.kind]}
                      </span>
                      <span className="sr-only">{c.kind}</span>
                      <span className="min-w-0 flex-1 truncate text-zinc-200" title={c.path}>
                        {c.path}
                      </span>
                      <span className="text-zinc-400">{c.type === 'file' ? formatBytes(c.sizeBytes, '—') : c.type}</span>
                    </li>
                  ))}
                </ul>
              </>
            )}
          </div>
        )}
      </div>
    </div>
  );
}
