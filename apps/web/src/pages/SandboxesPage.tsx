import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Plus } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { useEnvironments, useProviderName, useSandboxes } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Button } from '../components/Button.tsx';
import { LabelledField } from '../components/Field.tsx';
import { Section } from '../components/Section.tsx';
import { EmptyState, ErrorState, Skeleton, Spinner } from '../components/States.tsx';
import { Elapsed } from '../components/time.tsx';
import { SandboxCard } from '../modules/sandboxes/SandboxCard.tsx';

export function SandboxesPage() {
  const client = useClient();
  const queryClient = useQueryClient();
  const sandboxes = useSandboxes();
  const environments = useEnvironments();
  const providerName = useProviderName();
  const [environmentId, setEnvironmentId] = useState('');
  const [startedAt, setStartedAt] = useState(0);
  const chosen = environmentId || environments.data?.[0]?.id || '';
  const create = useMutation({
    mutationFn: () => client.sandboxes.create({ environmentId: chosen }),
    onSuccess: (sandbox) =>
      toast.success('Sandbox created', {
        description: sandbox.imageId ? 'It booted from the active custom image.' : 'It booted from the base configuration.',
      }),
    onError: (error) => toast.error('The sandbox was not created', { description: errorMessage(error) }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setStartedAt(Date.now());
    create.mutate();
  };
  const envName = (id: string | null) => environments.data?.find((e) => e.id === id)?.name ?? null;
  return (
    <div className="space-y-5">
      <div>
        <h1 className="text-xl font-semibold text-white">Sandboxes</h1>
        <p className="text-sm text-zinc-400">
          Sandboxes boot from an environment — from its active custom image when it matches the configuration.
        </p>
      </div>
      <Section title="Create sandbox">
        {environments.isPending ? (
          <Skeleton lines={1} label="Loading environments" />
        ) : environments.isError ? (
          <ErrorState error={environments.error} onRetry={() => environments.refetch()} />
        ) : environments.data.length === 0 ? (
          <EmptyState
            message="No environments yet — a sandbox boots from one."
            action={
              <Link to="/environments/new" className="text-sm text-teal-300 underline underline-offset-2">
                Create environment
              </Link>
            }
          />
        ) : (
          <form onSubmit={submit} className="flex flex-wrap items-end gap-2">
            <LabelledField htmlFor="sandbox-environment" label="Environment">
              <select
                id="sandbox-environment"
                value={chosen}
                onChange={(e) => setEnvironmentId(e.target.value)}
                className="block rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 text-sm text-zinc-100"
              >
                {environments.data.map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.name} ({providerName(e.provider)})
                  </option>
                ))}
              </select>
            </LabelledField>
            <Button
              type="submit"
              variant="primary"
              disabled={create.isPending || !chosen}
              icon={create.isPending ? <Spinner /> : <Plus aria-hidden className="size-4" />}
            >
              {create.isPending ? 'Creating…' : 'Create sandbox'}
            </Button>
            {create.isPending ? (
              <span className="text-sm text-zinc-300" role="status">
                Booting… <Elapsed since={startedAt} />
              </span>
            ) : null}
          </form>
        )}
      </Section>
      {sandboxes.isPending ? (
        <Skeleton lines={4} label="Loading sandboxes" />
      ) : sandboxes.isError ? (
        <ErrorState error={sandboxes.error} onRetry={() => sandboxes.refetch()} />
      ) : sandboxes.data.length === 0 ? (
        <EmptyState message="No sandboxes yet — pick an environment above and create one." />
      ) : (
        <div className="space-y-3">
          {sandboxes.data.map((s) => (
            <SandboxCard key={s.id} sandbox={s} environmentName={envName(s.environmentId)} />
          ))}
        </div>
      )}
    </div>
  );
}
