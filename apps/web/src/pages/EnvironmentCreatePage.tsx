import { CreateEnvironmentBodySchema } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorCode, errorMessage, fieldErrors } from '../api/errors.ts';
import { useConnections, useTargets } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Breadcrumb } from '../components/Breadcrumb.tsx';
import { Button } from '../components/Button.tsx';
import { LabelledField } from '../components/Field.tsx';
import { Section } from '../components/Section.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { ConnectionPicker } from '../modules/connections/ConnectionPicker.tsx';
import { ConfigForm, missingRequired } from '../modules/environments/ConfigForm.tsx';
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
  const [connectionId, setConnectionId] = useState('');
  // The app's own checks, shown at their field once the operator has tried to submit.
  const [checked, setChecked] = useState(false);
  const target = targets.data?.find((t) => t.provider === provider);
  const needsConnection = target?.connection !== undefined;
  const connections = useConnections(needsConnection);
  const create = useMutation({
    mutationFn: () =>
      client.environments.create({
        name: name.trim(),
        provider,
        config,
        ...(needsConnection ? { connectionId: connectionId || null } : {}),
      }),
    onSuccess: (env) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      toast.success(`Environment ${env.name} created.`);
      navigate(`/environments/${env.id}`);
    },
  });
  const nameProblem = CreateEnvironmentBodySchema.shape.name.safeParse(name.trim()).success
    ? null
    : name.trim() === ''
      ? 'Required — give the environment a name.'
      : 'Use 1–63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit.';
  const configMissing = target ? missingRequired(target.configSchema as JsonSchema, config) : {};
  // The server's answer names the field: a taken name, or a config field with its fix.
  const serverFields = create.isError ? fieldErrors(create.error) : {};
  const nameError =
    (checked ? nameProblem : null) ??
    (create.isError && errorCode(create.error) === 'conflict' ? errorMessage(create.error) : (serverFields.name ?? null));
  const configErrors = { ...(create.isError ? fieldErrors(create.error, 'config') : {}), ...(checked ? configMissing : {}) };
  const connectionProblem = needsConnection && !connectionId ? 'Required — choose the connection whose account runs the sandboxes.' : null;
  const connectionError = (checked ? connectionProblem : null) ?? (create.isError ? (serverFields.connectionId ?? null) : null);
  const fieldLevel = nameError !== null || Object.keys(configErrors).length > 0 || connectionError !== null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (nameProblem || Object.keys(configMissing).length > 0 || connectionProblem) return;
    create.mutate();
  };
  // An answer about the old input is stale once the input changes.
  const edited = () => {
    if (create.isError) create.reset();
  };
  return (
    <form onSubmit={submit} className="space-y-5" aria-label="Create environment" noValidate>
      <div>
        <Breadcrumb to="/environments" label="Environments" />
        <h1 className="text-xl font-semibold text-white">Create environment</h1>
        <p className="text-sm text-zinc-400">Save it first; the custom image section appears when you open it again to edit.</p>
      </div>
      <Section title="Basics">
        <LabelledField htmlFor="env-name" label="Name" className="max-w-sm">
          <input
            id="env-name"
            aria-required
            aria-invalid={nameError ? true : undefined}
            value={name}
            onChange={(e) => {
              setName(e.target.value);
              edited();
            }}
            className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 font-mono text-sm text-zinc-100"
            placeholder="build"
            aria-describedby={nameError ? 'env-name-error env-name-hint' : 'env-name-hint'}
          />
          {nameError ? (
            <p id="env-name-error" className="text-xs text-red-300" data-testid="name-error">
              {nameError}
            </p>
          ) : null}
          <p id="env-name-hint" className="text-xs text-zinc-400">
            1–63 lowercase letters, digits, ".", "_" or "-".
          </p>
        </LabelledField>
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
              setConnectionId('');
              edited();
            }}
          />
        )}
      </Section>
      {target && needsConnection ? (
        <Section title="Connection" description={`${target.displayName} runs sandboxes in the account of a connection.`}>
          {connections.isPending ? (
            <Skeleton label="Loading connections" />
          ) : connections.isError ? (
            <ErrorState error={connections.error} onRetry={() => connections.refetch()} />
          ) : (
            <ConnectionPicker
              provider={target.provider}
              connections={connections.data}
              value={connectionId}
              onChange={(next) => {
                setConnectionId(next);
                edited();
              }}
              error={connectionError}
            />
          )}
        </Section>
      ) : null}
      {target ? (
        <Section title={`${target.displayName} configuration`}>
          <ConfigForm
            schema={target.configSchema as JsonSchema}
            value={config}
            onChange={(next) => {
              setConfig(next);
              edited();
            }}
            errors={configErrors}
          />
          <HostNetworkWarning config={config} />
        </Section>
      ) : null}
      {create.isError && !fieldLevel ? <ErrorState title="The environment was not created" error={create.error} /> : null}
      {fieldLevel ? (
        <p className="text-sm text-red-300" role="alert">
          The environment was not created: fix the fields marked above.
        </p>
      ) : null}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={!provider || create.isPending}>
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
