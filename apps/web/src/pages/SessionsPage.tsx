import { Link } from 'react-router';
import { useAgents, useSessions } from '../api/queries.ts';
import { DataTable } from '../components/DataTable.tsx';
import { Section } from '../components/Section.tsx';
import { EmptyState, ErrorState, Skeleton } from '../components/States.tsx';
import { Time } from '../components/time.tsx';
import { SessionStatusBadge } from '../modules/sessions/SessionStatusBadge.tsx';
import { StartSession } from '../modules/sessions/StartSession.tsx';

export function SessionsPage() {
  const sessions = useSessions();
  const agents = useAgents({ includeArchived: true });
  const agentName = (id: string) => agents.data?.find((a) => a.id === id)?.name ?? id;
  return (
    <div className="space-y-5">
      <div>
        <h1 className="text-xl font-semibold text-white">Sessions</h1>
        <p className="text-sm text-zinc-400">
          One agent run each. A session pins what its agent resolved at start into its primary sandbox.
        </p>
      </div>
      <Section title="Start session">
        <StartSession />
      </Section>
      {sessions.isPending ? (
        <Skeleton lines={4} label="Loading sessions" />
      ) : sessions.isError ? (
        <ErrorState error={sessions.error} onRetry={() => sessions.refetch()} title="Could not load the sessions" />
      ) : sessions.data.length === 0 ? (
        <EmptyState message="No sessions yet — choose an agent above and start one." />
      ) : (
        <DataTable label="Sessions" size="page" columns={['Session', 'Agent', 'Binding', 'Status', 'Created', 'Ended']}>
          {sessions.data.map((s) => (
            <tr key={s.id} className="hover:bg-zinc-900/60">
              <td className="px-4 py-2.5">
                <Link to={`/sessions/${s.id}`} className="font-mono text-xs font-medium text-teal-300 hover:text-teal-200">
                  {s.id}
                </Link>
              </td>
              <td className="px-4 py-2.5 text-zinc-200">{agentName(s.agentId)}</td>
              <td className="px-4 py-2.5 font-mono text-zinc-300">{s.bindingName ?? 'no sandbox'}</td>
              <td className="px-4 py-2.5">
                <SessionStatusBadge status={s.status} />
              </td>
              <td className="px-4 py-2.5 text-zinc-300">
                <Time iso={s.createdAt} relative />
              </td>
              <td className="px-4 py-2.5 text-zinc-300">{s.endedAt ? <Time iso={s.endedAt} relative /> : '—'}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}
