import { FlaskConical } from 'lucide-react';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { useSettings } from '../api/queries.ts';
import { ErrorState, Skeleton } from '../components/States.tsx';

/** Environment screens exist only while the experimental switch is on; otherwise, say where it is. */
export function EnvironmentsGate({ children }: { children: ReactNode }) {
  const settings = useSettings();
  if (settings.isPending) return <Skeleton />;
  if (settings.isError) return <ErrorState error={settings.error} onRetry={() => settings.refetch()} />;
  if (settings.data.experimental.enableEnvironments) return <>{children}</>;
  return (
    <div className="flex items-start gap-3 rounded-lg border border-zinc-700 bg-zinc-900 p-5 text-sm" data-testid="environments-off-hint">
      <FlaskConical aria-hidden className="mt-0.5 size-5 text-teal-300" />
      <div>
        <p className="font-medium text-zinc-50">Environments are turned off</p>
        <p className="mt-1 text-zinc-300">
          Environments are an experimental feature. Turn them on in{' '}
          <Link to="/settings" className="text-teal-300 underline underline-offset-2 hover:text-teal-200">
            Settings → Instance settings → Experimental
          </Link>
          .
        </p>
      </div>
    </div>
  );
}
