import { CreateConnectionBodySchema, type SandboxTarget } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorCode, errorMessage, fieldErrors } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { LabelledField } from '../../components/Field.tsx';
import { ErrorState } from '../../components/States.tsx';
import { ConfigForm, missingRequired } from '../environments/ConfigForm.tsx';
import type { JsonSchema } from '../environments/json-schema.ts';

type Doc = Record<string, unknown>;

/** A new connection: its provider, then that provider's connection form (secrets as password fields). */
export function ConnectionCreateForm({ targets, onDone }: { targets: SandboxTarget[]; onDone: () => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const connected = targets.filter((t) => t.connection);
  const [provider, setProvider] = useState(connected[0]?.provider ?? '');
  const [name, setName] = useState('');
  const [config, setConfig] = useState<Doc>({});
  const [secrets, setSecrets] = useState<Doc>({});
  const [checked, setChecked] = useState(false);
  const target = connected.find((t) => t.provider === provider);
  const create = useMutation({
    mutationFn: () => client.connections.create({ name: name.trim(), provider, config, secrets }),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.connections });
      void queryClient.invalidateQueries({ queryKey: queryKeys.targets });
      toast.success(`Connection ${created.name} created.`);
      onDone();
    },
  });
  if (!target) return <p className="text-sm text-zinc-400">No provider on this server uses connections.</p>;
  const configSchema = target.connection!.configSchema as JsonSchema;
  const secretsSchema = target.connection!.secretsSchema as JsonSchema;
  const nameProblem = CreateConnectionBodySchema.shape.name.safeParse(name.trim()).success
    ? null
    : 'Use 1–63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit.';
  const missing = { config: missingRequired(configSchema, config), secrets: missingRequired(secretsSchema, secrets) };
  const nameError =
    (checked ? nameProblem : null) ?? (create.isError && errorCode(create.error) === 'conflict' ? errorMessage(create.error) : null);
  const errorsOf = (half: 'config' | 'secrets') => ({
    ...(create.isError ? fieldErrors(create.error, half) : {}),
    ...(checked ? missing[half] : {}),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (nameProblem || Object.keys(missing.config).length > 0 || Object.keys(missing.secrets).length > 0) return;
    create.mutate();
  };
  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Create connection" noValidate>
      <div className="grid gap-4 sm:grid-cols-2">
        <LabelledField htmlFor="connection-provider" label="Provider">
          <select
            id="connection-provider"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              setConfig({});
              setSecrets({});
            }}
            className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 text-sm text-zinc-100"
          >
            {connected.map((t) => (
              <option key={t.provider} value={t.provider}>
                {t.displayName}
              </option>
            ))}
          </select>
        </LabelledField>
        <LabelledField htmlFor="connection-name" label="Name">
          <input
            id="connection-name"
            aria-required
            aria-invalid={nameError ? true : undefined}
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder={`${provider}-main`}
            className="w-full rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 font-mono text-sm text-zinc-100"
          />
          {nameError ? (
            <p className="text-xs text-red-300" data-testid="connection-name-error">
              {nameError}
            </p>
          ) : null}
        </LabelledField>
      </div>
      <ConfigForm schema={configSchema} value={config} onChange={setConfig} idPrefix="connection-config" errors={errorsOf('config')} />
      <ConfigForm schema={secretsSchema} value={secrets} onChange={setSecrets} idPrefix="connection-secrets" errors={errorsOf('secrets')} />
      <p className="text-xs text-zinc-400">Secrets are stored encrypted and never shown again, here or in the API.</p>
      {create.isError &&
      errorCode(create.error) !== 'conflict' &&
      Object.keys(errorsOf('config')).length + Object.keys(errorsOf('secrets')).length === 0 ? (
        <ErrorState title="The connection was not created" error={create.error} />
      ) : null}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create connection'}
        </Button>
        <Button onClick={onDone}>Cancel</Button>
      </div>
    </form>
  );
}
