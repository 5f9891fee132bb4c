import type { AgentBody, StartSessionBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Play } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { useAgents } from '../../api/queries.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { INPUT_CLASS, LABEL_CLASS, LabelledField } from '../../components/Field.tsx';
import { LinkButton } from '../../components/LinkButton.tsx';
import { EmptyState, ErrorState, Skeleton, Spinner } from '../../components/States.tsx';
import { Elapsed } from '../../components/time.tsx';
import { MODE_WORDS } from '../agents/PolicyEditor.tsx';
import { type RevisionCatalog, useRevisionCatalog } from '../agents/revision-catalog.ts';

function PinnedLabel({ revisionId, catalog }: { revisionId: string; catalog: RevisionCatalog }) {
  const pinned = catalog.find(revisionId);
  if (!pinned) return <code className="font-mono text-xs">{revisionId}</code>;
  return (
    <>
      {pinned.environment.name} <span className="font-mono">#{pinned.revision.number}</span>
    </>
  );
}

/** A fixed agent's one sandbox, shown and not chosen. */
function FixedSandbox({ agent, catalog }: { agent: AgentBody; catalog: RevisionCatalog }) {
  const policy = agent.currentVersion.sandboxPolicy;
  const name = policy.default ?? Object.keys(policy.bindings)[0] ?? '';
  const binding = policy.bindings[name];
  const pinned = binding ? catalog.find(binding.environmentRevisionId) : null;
  return (
    <div className="rounded-md border border-zinc-800 bg-zinc-950/60 p-3 text-sm" data-testid="fixed-sandbox">
      <p className="text-zinc-400">This agent's sandbox is fixed: every session gets this one.</p>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
        <dt className="text-zinc-400">Binding</dt>
        <dd className="font-mono text-zinc-100">{name}</dd>
        <dt className="text-zinc-400">Environment</dt>
        <dd className="text-zinc-100">{pinned?.environment.name ?? '—'}</dd>
        <dt className="text-zinc-400">Revision</dt>
        <dd className="font-mono text-zinc-100">{pinned ? `#${pinned.revision.number}` : (binding?.environmentRevisionId ?? '—')}</dd>
      </dl>
    </div>
  );
}

/**
 * Starts a session: choose an agent; a selectable or configurable one offers its bindings, a
 * fixed one shows its sandbox read-only, one without a sandbox says so.
 */
export function StartSession() {
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const agents = useAgents();
  const catalog = useRevisionCatalog();
  const id = useId();
  const [agentId, setAgentId] = useState('');
  const [use, setUse] = useState('');
  const [startedAt, setStartedAt] = useState(0);
  const agent = agents.data?.find((a) => a.id === agentId) ?? agents.data?.[0];
  const policy = agent?.currentVersion.sandboxPolicy;
  const choosing = policy?.mode === 'selectable' || policy?.mode === 'configurable';
  const chosen = use && policy && Object.hasOwn(policy.bindings, use) ? use : (policy?.default ?? '');
  const start = useMutation({
    mutationFn: () => {
      const body: StartSessionBody = { agentId: agent!.id, ...(choosing && chosen ? { sandbox: { use: chosen } } : {}) };
      return client.sessions.start(body);
    },
    onSuccess: (session) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.sessions });
      void queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes });
      toast.success('Session started');
      navigate(`/sessions/${session.id}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setStartedAt(Date.now());
    start.mutate();
  };
  if (agents.isPending) return <Skeleton lines={2} label="Loading agents" />;
  if (agents.isError) return <ErrorState error={agents.error} onRetry={() => agents.refetch()} title="Could not load the agents" />;
  if (!agent || !policy)
    return (
      <EmptyState message="No agents yet — a session runs for an agent." action={<LinkButton to="/agents/new">Create agent</LinkButton>} />
    );
  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Start session">
      <div className="grid gap-4 sm:grid-cols-2">
        <LabelledField htmlFor={`${id}-agent`} label="Agent">
          <select
            id={`${id}-agent`}
            value={agent.id}
            onChange={(e) => {
              setAgentId(e.target.value);
              setUse('');
              start.reset();
            }}
            className={INPUT_CLASS}
          >
            {agents.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.displayName ? `${a.name} — ${a.displayName}` : a.name}
              </option>
            ))}
          </select>
          <p className="text-xs text-zinc-400">
            {MODE_WORDS[policy.mode].label}: {MODE_WORDS[policy.mode].sentence}
          </p>
        </LabelledField>
      </div>
      {policy.mode === 'none' ? (
        <p className="text-sm text-zinc-300" data-testid="no-sandbox">
          This agent has no sandbox: the session starts without one.
        </p>
      ) : policy.mode === 'fixed' ? (
        <FixedSandbox agent={agent} catalog={catalog} />
      ) : (
        <fieldset className="space-y-2">
          <legend className={LABEL_CLASS}>Sandbox</legend>
          {Object.entries(policy.bindings).map(([name, binding]) => (
            <label key={name} className="flex cursor-pointer items-center gap-2 text-sm text-zinc-200">
              <input
                type="radio"
                name={`${id}-binding`}
                value={name}
                checked={chosen === name}
                onChange={() => setUse(name)}
                className="accent-teal-500"
              />
              <span className="font-mono text-zinc-100">{name}</span>
              <span className="text-zinc-400">
                <PinnedLabel revisionId={binding.environmentRevisionId} catalog={catalog} />
                {binding.durability ? `, ${binding.durability}` : ''}
                {policy.default === name ? ' (default)' : ''}
              </span>
            </label>
          ))}
        </fieldset>
      )}
      <div className="flex flex-wrap items-center gap-3">
        <Button
          type="submit"
          variant="primary"
          disabled={start.isPending}
          icon={start.isPending ? <Spinner /> : <Play aria-hidden className="size-4" />}
        >
          {start.isPending ? 'Starting…' : 'Start session'}
        </Button>
        {start.isPending ? (
          <span className="text-sm text-zinc-300" role="status">
            Starting the session{policy.mode === 'none' ? '' : ' and its sandbox'}… <Elapsed since={startedAt} />
          </span>
        ) : null}
      </div>
      {start.isError ? <ErrorState title="The session did not start" error={start.error} /> : null}
    </form>
  );
}
