import type { UseQueryResult } from '@tanstack/react-query';
import { AlertTriangle, RotateCw } from 'lucide-react';
import type { ReactNode } from 'react';
import { errorMessage } from '../api/errors.ts';
import { Button } from './Button.tsx';

/** Grey bars where content will be, so a loading page is never blank. */
export function Skeleton({ lines = 3, label = 'Loading' }: { lines?: number; label?: string }) {
  return (
    <div role="status" aria-label={label} className="space-y-2">
      {Array.from({ length: lines }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have no identity
        <div key={i} className="h-4 animate-pulse rounded bg-zinc-800" style={{ width: `${90 - i * 15}%` }} />
      ))}
    </div>
  );
}

/** The API's message in words, and a retry. */
export function ErrorState({ error, onRetry, title = 'Something went wrong' }: { error: unknown; onRetry?: () => void; title?: string }) {
  return (
    <div role="alert" className="flex items-start gap-3 rounded-md border border-red-900 bg-red-950/60 p-3 text-sm">
      <AlertTriangle aria-hidden className="mt-0.5 size-4 shrink-0 text-red-300" />
      <div className="min-w-0 flex-1">
        <p className="font-medium text-red-200">{title}</p>
        <p className="mt-0.5 break-words text-red-100">{errorMessage(error)}</p>
      </div>
      {onRetry ? (
        <Button size="sm" onClick={onRetry} icon={<RotateCw aria-hidden className="size-3.5" />}>
          Retry
        </Button>
      ) : null}
    </div>
  );
}

/** A sentence and the next action. */
export function EmptyState({ message, action }: { message: ReactNode; action?: ReactNode }) {
  return (
    <div className="flex flex-col items-start gap-3 rounded-md border border-dashed border-zinc-700 p-6 text-sm text-zinc-300">
      <p>{message}</p>
      {action}
    </div>
  );
}

export function Spinner({ className = 'size-4' }: { className?: string }) {
  return <RotateCw aria-hidden className={`animate-spin ${className}`} />;
}

/** What a query shows while it loads, when it failed (with a retry), and its data once there. */
export function QueryState<T>({
  query,
  loading,
  lines,
  errorTitle,
  children,
}: {
  query: UseQueryResult<T>;
  /** The skeleton's accessible label ("Loading …"). */
  loading: string;
  lines?: number | undefined;
  errorTitle?: string | undefined;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Skeleton label={loading} {...(lines ? { lines } : {})} />;
  if (query.isError)
    return <ErrorState error={query.error} onRetry={() => void query.refetch()} {...(errorTitle ? { title: errorTitle } : {})} />;
  return children(query.data);
}
