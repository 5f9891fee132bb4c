import type { ConnectionBody, ConnectionTestAnswer } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { useConnections, useProviderName, useTargets } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Button } from '../components/Button.tsx';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { DataTable } from '../components/DataTable.tsx';
import { Section } from '../components/Section.tsx';
import { EmptyState, ErrorState, Skeleton } from '../components/States.tsx';
import { Time } from '../components/time.tsx';
import { ConnectionCreateForm } from '../modules/connections/ConnectionCreateForm.tsx';

/** Settings → Connections: the accounts connected providers (Daytona) run sandboxes in. */
export function ConnectionsPage() {
  const client = useClient();
  const queryClient = useQueryClient();
  const connections = useConnections();
  const targets = useTargets();
  const providerName = useProviderName();
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ConnectionBody | null>(null);
  const [results, setResults] = useState<Record<string, ConnectionTestAnswer>>({});
  const test = useMutation({
    mutationFn: (id: string) => client.connections.test(id),
    onSuccess: (answer, id) => setResults((r) => ({ ...r, [id]: answer })),
    onError: (error) => toast.error(errorMessage(error)),
  });
  const remove = useMutation({
    mutationFn: (id: string) => client.connections.delete(id),
    onSuccess: (deleted) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.connections });
      void queryClient.invalidateQueries({ queryKey: queryKeys.targets });
      toast.success(`Connection ${deleted.name} deleted.`);
    },
    onError: (error) => toast.error(errorMessage(error)),
  });

  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm text-zinc-400">
          <Link to="/settings" className="hover:text-zinc-200">
            Settings
          </Link>
        </p>
        <h1 className="text-xl font-semibold text-white">Connections</h1>
        <p className="text-sm text-zinc-400">
          Credentials for providers that run sandboxes in an account of yours. Environments pick one; its secrets never leave the server.
        </p>
      </div>
      <Section
        id="connections"
        title="Connections"
        actions={
          creating ? null : (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New connection
            </Button>
          )
        }
      >
        {creating ? (
          targets.isPending ? (
            <Skeleton label="Loading providers" />
          ) : targets.isError ? (
            <ErrorState error={targets.error} onRetry={() => targets.refetch()} />
          ) : (
            <div className="mb-6">
              <ConnectionCreateForm targets={targets.data} onDone={() => setCreating(false)} />
            </div>
          )
        ) : null}
        {connections.isPending ? (
          <Skeleton />
        ) : connections.isError ? (
          <ErrorState error={connections.error} onRetry={() => connections.refetch()} />
        ) : connections.data.length === 0 ? (
          <EmptyState message="No connections yet. A Daytona environment needs one: create it here, then pick it when you create the environment." />
        ) : (
          <DataTable label="Connections" columns={['Name', 'Provider', 'Secrets', 'Updated', 'Check', '']} size="section">
            {connections.data.map((c) => {
              const result = results[c.id];
              return (
                <tr key={c.id}>
                  <td className="px-3 py-1.5 font-mono text-zinc-100">{c.name}</td>
                  <td className="px-3 py-1.5 text-zinc-300">{providerName(c.provider)}</td>
                  <td className="px-3 py-1.5 text-zinc-400">{Object.keys(c.secrets).join(', ') || '—'} (hidden)</td>
                  <td className="px-3 py-1.5 text-zinc-400">
                    <Time iso={c.updatedAt} relative />
                  </td>
                  <td className="px-3 py-1.5 whitespace-normal" data-testid={`test-result-${c.name}`}>
                    {result ? (
                      result.ok ? (
                        <span className="text-emerald-300">Works</span>
                      ) : (
                        <span className="text-red-300">{result.reason}</span>
                      )
                    ) : (
                      <span className="text-zinc-500">Not checked</span>
                    )}
                  </td>
                  <td className="px-3 py-1.5">
                    <div className="flex gap-2">
                      <Button size="sm" onClick={() => test.mutate(c.id)} disabled={test.isPending && test.variables === c.id}>
                        {test.isPending && test.variables === c.id ? 'Testing…' : 'Test'}
                      </Button>
                      <Button size="sm" onClick={() => setDeleting(c)}>
                        Delete
                      </Button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </DataTable>
        )}
      </Section>
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => {
          if (!open) setDeleting(null);
        }}
        title={`Delete connection ${deleting?.name ?? ''}?`}
        description="Its credentials are removed from Sandcast. A connection an environment uses cannot be deleted: the answer names the environments."
        confirmLabel="Delete connection"
        danger
        onConfirm={() => {
          if (deleting) remove.mutate(deleting.id);
          setDeleting(null);
        }}
      />
    </div>
  );
}
