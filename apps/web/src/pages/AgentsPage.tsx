import { Plus } from 'lucide-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAgents } from '../api/queries.ts';
import { DataTable } from '../components/DataTable.tsx';
import { LinkButton } from '../components/LinkButton.tsx';
import { EmptyState, ErrorState, Skeleton } from '../components/States.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { Time } from '../components/time.tsx';
import { MODE_WORDS } from '../modules/agents/PolicyEditor.tsx';

export function AgentsPage() {
  const [includeArchived, setIncludeArchived] = useState(false);
  const agents = useAgents({ includeArchived });
  const createLink = (
    <LinkButton to="/agents/new" icon={<Plus aria-hidden className="size-4" />}>
      Create agent
    </LinkButton>
  );
  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold text-white">Agents</h1>
          <p className="text-sm text-zinc-400">
            Named consumers of sandboxes. An agent's policy binds exact environment revisions; every save is a new version.
          </p>
        </div>
        <div className="flex items-center gap-4">
          <label className="inline-flex items-center gap-2 text-sm text-zinc-300">
            <input
              type="checkbox"
              checked={includeArchived}
              onChange={(e) => setIncludeArchived(e.target.checked)}
              className="accent-teal-500"
            />
            Show archived
          </label>
          {agents.data?.length ? createLink : null}
        </div>
      </div>
      {agents.isPending ? (
        <Skeleton lines={4} label="Loading agents" />
      ) : agents.isError ? (
        <ErrorState error={agents.error} onRetry={() => agents.refetch()} title="Could not load the agents" />
      ) : agents.data.length === 0 ? (
        <EmptyState message="No agents yet — create one to bind environments for its sessions." action={createLink} />
      ) : (
        <DataTable label="Agents" size="page" columns={['Name', 'Mode', 'Bindings', 'Version', 'Archived']}>
          {agents.data.map((agent) => {
            const policy = agent.currentVersion.sandboxPolicy;
            return (
              <tr key={agent.id} className="hover:bg-zinc-900/60">
                <td className="px-4 py-2.5">
                  <Link to={`/agents/${agent.id}`} className="font-medium text-teal-300 hover:text-teal-200">
                    {agent.name}
                  </Link>
                  {agent.displayName ? <span className="ml-2 text-zinc-400">{agent.displayName}</span> : null}
                </td>
                <td className="px-4 py-2.5 text-zinc-200">{MODE_WORDS[policy.mode].label}</td>
                <td className="px-4 py-2.5 font-mono text-zinc-300">
                  {Object.keys(policy.bindings)
                    .map((name) => (name === policy.default && policy.mode !== 'fixed' ? `${name} (default)` : name))
                    .join(', ') || '—'}
                </td>
                <td className="px-4 py-2.5 font-mono text-zinc-300">v{agent.currentVersion.number}</td>
                <td className="px-4 py-2.5 text-zinc-300">
                  {agent.archivedAt ? (
                    <span className="inline-flex items-center gap-2">
                      <StatusBadge tone="muted">archived</StatusBadge> <Time iso={agent.archivedAt} relative />
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </div>
  );
}
