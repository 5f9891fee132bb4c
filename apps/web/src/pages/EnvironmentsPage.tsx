import { Plus } from 'lucide-react';
import { Link } from 'react-router';
import { useEnvironments, useProviderName } from '../api/queries.ts';
import { DataTable } from '../components/DataTable.tsx';
import { LinkButton } from '../components/LinkButton.tsx';
import { EmptyState, ErrorState, Skeleton } from '../components/States.tsx';
import { Time } from '../components/time.tsx';

export function EnvironmentsPage() {
  const environments = useEnvironments();
  const providerName = useProviderName();
  const createLink = (
    <LinkButton to="/environments/new" icon={<Plus aria-hidden className="size-4" />}>
      Create environment
    </LinkButton>
  );
  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold text-white">Environments</h1>
          <p className="text-sm text-zinc-400">Named provider configurations that sandboxes boot from. Every edit is a new revision.</p>
        </div>
        {environments.data?.length ? createLink : null}
      </div>
      {environments.isPending ? (
        <Skeleton lines={4} label="Loading environments" />
      ) : environments.isError ? (
        <ErrorState error={environments.error} onRetry={() => environments.refetch()} />
      ) : environments.data.length === 0 ? (
        <EmptyState message="No environments yet — create one to choose a provider and its configuration." action={createLink} />
      ) : (
        <DataTable label="Environments" size="page" columns={['Name', 'Provider', 'Revision', 'Updated']}>
          {environments.data.map((env) => (
            <tr key={env.id} className="hover:bg-zinc-900/60">
              <td className="px-4 py-2.5">
                <Link to={`/environments/${env.id}`} className="font-medium text-teal-300 hover:text-teal-200">
                  {env.name}
                </Link>
              </td>
              <td className="px-4 py-2.5 text-zinc-200">{providerName(env.provider)}</td>
              <td className="px-4 py-2.5 font-mono text-zinc-300">#{env.currentRevision.number}</td>
              <td className="px-4 py-2.5 text-zinc-300">
                <Time iso={env.updatedAt} relative />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}
