import type { FleetOverviewRow } from '@sandcast/contracts';
import { useState } from 'react';
import { Link } from 'react-router';
import { useFleetOverview } from '../api/queries.ts';
import { CopyableId } from '../components/CopyButton.tsx';
import { DataTable } from '../components/DataTable.tsx';
import { EmptyState, ErrorState, Skeleton } from '../components/States.tsx';
import { StatusBadge, type StatusTone } from '../components/StatusBadge.tsx';
import { SandboxStateLine } from '../modules/sandboxes/SandboxState.tsx';

type Flag = FleetOverviewRow['attention'][number];

/** Each flag in the operator's words, and how loud it is. */
const FLAGS: Record<Flag, { label: string; tone: StatusTone; title: string }> = {
  lost: { label: 'lost', tone: 'warning', title: 'Its provider no longer has the compute' },
  failed: { label: 'failed', tone: 'failed', title: 'It could not be created, booted or kept' },
  idle_running: { label: 'idle running', tone: 'warning', title: 'Running with no activity for longer than its idle window' },
  cleanup_failed: { label: 'cleanup failed', tone: 'failed', title: 'It should be gone, and its compute is still there' },
};

const ROLE_LABEL: Record<FleetOverviewRow['role'], string> = { plain: 'sandbox', primary: 'primary', resource: 'resource' };

/**
 * Every sandbox the instance keeps — plain ones, sessions' primaries and their resource sandboxes
 * — with what it runs, where it is going and what needs a look. The flags come from the server.
 */
export function FleetPage() {
  const [includeDeleted, setIncludeDeleted] = useState(false);
  const [onlyAttention, setOnlyAttention] = useState(false);
  const fleet = useFleetOverview({ includeDeleted });
  const rows = (fleet.data ?? []).filter((row) => !onlyAttention || row.attention.length > 0);
  const flagged = (fleet.data ?? []).filter((row) => row.attention.length > 0).length;
  return (
    <div className="space-y-5">
      <div>
        <h1 className="text-xl font-semibold text-white">Fleet</h1>
        <p className="text-sm text-zinc-400">
          Every sandbox: its session, the environment revision and image it pinned, desired and observed state, generation and last
          checkpoint.
          {fleet.data ? ` ${flagged === 0 ? 'Nothing needs attention.' : `${flagged} need${flagged === 1 ? 's' : ''} attention.`}` : ''}
        </p>
      </div>
      <div className="flex flex-wrap gap-4 text-sm text-zinc-200">
        <label className="inline-flex items-center gap-2">
          <input type="checkbox" checked={onlyAttention} onChange={(e) => setOnlyAttention(e.target.checked)} />
          Needs attention only
        </label>
        <label className="inline-flex items-center gap-2">
          <input type="checkbox" checked={includeDeleted} onChange={(e) => setIncludeDeleted(e.target.checked)} />
          Show deleted
        </label>
      </div>
      {fleet.isPending ? (
        <Skeleton lines={4} label="Loading the fleet" />
      ) : fleet.isError ? (
        <ErrorState error={fleet.error} onRetry={() => fleet.refetch()} title="Could not load the fleet" />
      ) : rows.length === 0 ? (
        <EmptyState
          message={
            onlyAttention ? (
              'Nothing needs attention.'
            ) : (
              <>
                No sandboxes yet —{' '}
                <Link to="/sessions" className="text-teal-300 underline underline-offset-2">
                  start a session
                </Link>{' '}
                or create a sandbox.
              </>
            )
          }
        />
      ) : (
        <DataTable
          label="Fleet"
          size="page"
          columns={[
            'Sandbox',
            'Role',
            'Session',
            'Environment',
            'Revision',
            'Image',
            'State',
            'Generation',
            'Last checkpoint',
            'Attention',
          ]}
        >
          {rows.map((row) => (
            <tr key={row.id}>
              <td>
                <CopyableId value={row.logicalId ?? row.id} label={`Copy ${row.logicalId ?? row.id}`} />
              </td>
              <td className="text-zinc-300">{ROLE_LABEL[row.role]}</td>
              <td>
                {row.session ? (
                  <Link to={`/sessions/${row.session.id}`} className="font-mono text-xs text-teal-300 hover:text-teal-200">
                    {row.session.id}
                  </Link>
                ) : (
                  <span className="text-zinc-500">—</span>
                )}
                {row.session?.status === 'ended' ? <span className="ml-1 text-xs text-zinc-400">(ended)</span> : null}
              </td>
              <td className="text-zinc-200">{row.environment?.name ?? <span className="text-zinc-500">deleted</span>}</td>
              <td className="text-zinc-300">{row.environmentRevisionNumber === null ? '—' : `rev ${row.environmentRevisionNumber}`}</td>
              <td>
                {row.imageId ? (
                  <span className="font-mono text-xs text-zinc-300">{row.imageId}</span>
                ) : (
                  <span className="text-zinc-400">base</span>
                )}
              </td>
              <td>
                <SandboxStateLine desired={row.desiredState} observed={row.observedState} />
              </td>
              <td className="font-mono text-xs text-zinc-300">{row.generation}</td>
              <td>
                {row.lastCheckpointId ? (
                  <span className="font-mono text-xs text-zinc-300">{row.lastCheckpointId}</span>
                ) : (
                  <span className="text-zinc-500">none</span>
                )}
              </td>
              <td>
                {row.attention.length === 0 ? (
                  <span className="text-zinc-500">—</span>
                ) : (
                  <span className="inline-flex gap-1">
                    {row.attention.map((flag) => (
                      <span key={flag} title={FLAGS[flag].title}>
                        <StatusBadge tone={FLAGS[flag].tone}>{FLAGS[flag].label}</StatusBadge>
                      </span>
                    ))}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}
