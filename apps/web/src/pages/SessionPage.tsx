import { type ReactNode, useId } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { useAgent, useSession, useSessionSandbox } from '../api/queries.ts';
import { Breadcrumb } from '../components/Breadcrumb.tsx';
import { CopyableId } from '../components/CopyButton.tsx';
import { Section } from '../components/Section.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { Time } from '../components/time.tsx';
import { SessionStatusBadge } from '../modules/sessions/SessionStatusBadge.tsx';
import { TerminalTab } from '../modules/sessions/TerminalTab.tsx';
import { WorkspaceTab } from '../modules/sessions/WorkspaceTab.tsx';

const TABS = [
  { id: 'workspace', label: 'Workspace' },
  { id: 'terminal', label: 'Terminal' },
] as const;
type TabId = (typeof TABS)[number]['id'];

/** The tabs of a page: buttons with the tab roles; arrow keys move between them. */
function Tabs({ current, onSelect, idPrefix }: { current: TabId; onSelect: (id: TabId) => void; idPrefix: string }) {
  return (
    <div role="tablist" aria-label="Session" className="flex gap-1 border-b border-zinc-800">
      {TABS.map((tab, index) => (
        <button
          key={tab.id}
          type="button"
          role="tab"
          id={`${idPrefix}-tab-${tab.id}`}
          aria-selected={current === tab.id}
          aria-controls={`${idPrefix}-panel-${tab.id}`}
          tabIndex={current === tab.id ? 0 : -1}
          onClick={() => onSelect(tab.id)}
          onKeyDown={(event) => {
            const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
            if (!step) return;
            const next = TABS[(index + step + TABS.length) % TABS.length]!;
            onSelect(next.id);
            document.getElementById(`${idPrefix}-tab-${next.id}`)?.focus();
          }}
          className={`-mb-px border-b-2 px-3 py-2 text-sm font-medium ${current === tab.id ? 'border-teal-500 text-white' : 'border-transparent text-zinc-400 hover:text-zinc-200'}`}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}

function TabPanel({ id, idPrefix, children }: { id: TabId; idPrefix: string; children: ReactNode }) {
  return (
    <div role="tabpanel" id={`${idPrefix}-panel-${id}`} aria-labelledby={`${idPrefix}-tab-${id}`} className="pt-4">
      {children}
    </div>
  );
}

export function SessionPage() {
  const { id = '' } = useParams();
  const idPrefix = useId();
  const [params, setParams] = useSearchParams();
  const tab: TabId = params.get('tab') === 'terminal' ? 'terminal' : 'workspace';
  const session = useSession(id);
  const hasSandbox = Boolean(session.data?.primarySandboxId);
  const sandbox = useSessionSandbox(id, hasSandbox);
  const agent = useAgent(session.data?.agentId ?? '');
  if (session.isPending) return <Skeleton lines={6} label="Loading session" />;
  if (session.isError) return <ErrorState error={session.error} onRetry={() => session.refetch()} title="Could not load the session" />;
  const s = session.data;
  return (
    <div className="space-y-5">
      <div>
        <Breadcrumb to="/sessions" label="Sessions" />
        <h1 className="flex flex-wrap items-center gap-2 text-xl font-semibold text-white">
          Session <CopyableId value={s.id} label="Copy session id" /> <SessionStatusBadge status={s.status} />
        </h1>
        <p className="mt-0.5 flex flex-wrap gap-x-4 text-sm text-zinc-300">
          <span>
            <span className="text-zinc-400">Agent</span>{' '}
            <Link to={`/agents/${s.agentId}`} className="text-teal-300 hover:text-teal-200">
              {agent.data?.name ?? s.agentId}
            </Link>
          </span>
          <span>
            <span className="text-zinc-400">Started</span> <Time iso={s.createdAt} relative />
          </span>
          {s.endedAt ? (
            <span>
              <span className="text-zinc-400">Ended</span> <Time iso={s.endedAt} relative />
            </span>
          ) : null}
        </p>
      </div>
      <Section title="Primary sandbox">
        <Tabs
          current={tab}
          onSelect={(next) => setParams(next === 'workspace' ? {} : { tab: next }, { replace: true })}
          idPrefix={idPrefix}
        />
        {hasSandbox && sandbox.isPending ? (
          <div className="pt-4">
            <Skeleton lines={6} label="Loading the sandbox" />
          </div>
        ) : hasSandbox && sandbox.isError ? (
          <div className="pt-4">
            <ErrorState error={sandbox.error} onRetry={() => sandbox.refetch()} title="Could not load the sandbox" />
          </div>
        ) : tab === 'workspace' ? (
          <TabPanel id="workspace" idPrefix={idPrefix}>
            <WorkspaceTab session={s} sandbox={sandbox.data ?? null} />
          </TabPanel>
        ) : (
          <TabPanel id="terminal" idPrefix={idPrefix}>
            {sandbox.data ? (
              <TerminalTab sessionId={s.id} sandbox={sandbox.data} />
            ) : (
              <p className="text-sm text-zinc-300">This session has no sandbox, so there is no shell to open.</p>
            )}
          </TabPanel>
        )}
      </Section>
    </div>
  );
}
