import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { useTargets } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Breadcrumb } from '../components/Breadcrumb.tsx';
import { Button } from '../components/Button.tsx';
import { Section } from '../components/Section.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { ConfigForm } from '../modules/environments/ConfigForm.tsx';
import { HostNetworkWarning } from '../modules/environments/HostNetworkWarning.tsx';
import type { JsonSchema } from '../modules/environments/json-schema.ts';
import { ProviderPicker } from '../modules/environments/ProviderPicker.tsx';

export function EnvironmentCreatePage() {
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const targets = useTargets();
  const [name, setName] = useState('');
  const [provider, setProvider] = useState('');
  const [config, setConfig] = useState<Record<string, unknown>>({});
  const target = targets.data?.find((t) => t.provider === provider);
  const create = useMutation({
    mutationFn: () => client.environments.create({ name: name.trim(), provider, config }),
    onSuccess: (env) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      toast.success(`Environment ${env.name} created.`);
      navigate(`/environments/${env.id}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} className="space-y-5" aria-label="Create environment">
      <div>
        <Breadcrumb to="/environments" label="Environments" />
        <h1 className="text-xl font-semibold text-white">Create environment</h1>
        <p className="text-sm text-zinc-400">Save it first; the custom image section appears when you open it again to edit.</p>
      </div>
      <Section title="Basics">
        <div className="max-w-sm space-y-1">
          <label htmlFor="env-name" className="text-sm font-medium text-zinc-100">
            Name
          </label>
          <input
            id="env-name"
            required
            pattern="[a-z0-9][a-z0-9._\-]{0,62}"
            value={name}
            onChange={(e) => setName(e.target.value)}
            className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 font-mono text-sm text-zinc-100"
            placeholder="build"
            aria-describedby="env-name-hint"
          />
          <p id="env-name-hint" className="text-xs text-zinc-400">
            1–63 lowercase letters, digits, ".", "_" or "-".
          </p>
        </div>
      </Section>
      <Section title="Provider">
        {targets.isPending ? (
          <Skeleton label="Loading providers" />
        ) : targets.isError ? (
          <ErrorState error={targets.error} onRetry={() => targets.refetch()} />
        ) : (
          <ProviderPicker
            targets={targets.data}
            value={provider}
            onChange={(next) => {
              setProvider(next);
              setConfig({});
            }}
          />
        )}
      </Section>
      {target ? (
        <Section title={`${target.displayName} configuration`}>
          <ConfigForm schema={target.configSchema as JsonSchema} value={config} onChange={setConfig} />
          <HostNetworkWarning config={config} />
        </Section>
      ) : null}
      {create.isError ? <ErrorState title="The environment was not created" error={create.error} /> : null}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={!provider || !name.trim() || create.isPending}>
          {create.isPending ? 'Creating…' : 'Create environment'}
        </Button>
        <Link to="/environments" className="rounded-md px-3 py-1.5 text-sm text-zinc-300 hover:bg-zinc-800">
          Cancel
        </Link>
      </div>
      {create.isError ? <p className="sr-only">{errorMessage(create.error)}</p> : null}
    </form>
  );
}
