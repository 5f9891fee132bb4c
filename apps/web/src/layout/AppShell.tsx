import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Bot, Boxes, Database, Layers, LayoutGrid, LogOut, PlayCircle, Server, Settings, ShieldCheck } from 'lucide-react';
import type { ReactNode } from 'react';
import { NavLink, useNavigate } from 'react-router';
import { useClient } from '../api/client-context.tsx';
import { useAuthSession, useHealth, useSettings, useTargets } from '../api/queries.ts';

const MODE_LABEL = { local_trusted: 'Local trusted', authenticated: 'Authenticated' } as const;

function NavItem({ to, icon, children }: { to: string; icon: ReactNode; children: ReactNode }) {
  return (
    <NavLink
      to={to}
      className={({ isActive }) =>
        `flex items-center gap-2 rounded-md px-3 py-2 text-sm font-medium ${isActive ? 'bg-zinc-800 text-white' : 'text-zinc-300 hover:bg-zinc-900 hover:text-white'}`
      }
    >
      {icon}
      <span>{children}</span>
    </NavLink>
  );
}

/** What the instance is: mode, database, providers that can run here. */
function InstanceBar() {
  const health = useHealth();
  const targets = useTargets();
  const session = useAuthSession();
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const logout = useMutation({
    mutationFn: () => client.auth.logout(),
    onSettled: async () => {
      queryClient.clear();
      navigate('/login');
    },
  });
  const available = targets.data?.filter((t) => t.available) ?? [];
  return (
    <section className="flex flex-wrap items-center gap-x-5 gap-y-1 text-xs text-zinc-300" aria-label="Instance">
      <span className="inline-flex items-center gap-1.5">
        <ShieldCheck aria-hidden className="size-3.5 text-zinc-400" />
        <span className="text-zinc-400">Mode</span>
        <span data-testid="instance-mode">{health.data ? MODE_LABEL[health.data.deploymentMode] : '…'}</span>
      </span>
      <span className="inline-flex items-center gap-1.5">
        <Database aria-hidden className="size-3.5 text-zinc-400" />
        <span className="text-zinc-400">Database</span>
        <span>{health.data ? (health.data.database === 'pglite' ? 'Embedded (PGlite)' : 'Postgres') : '…'}</span>
      </span>
      <span
        className="inline-flex items-center gap-1.5"
        title={targets.data?.map((t) => `${t.displayName}: ${t.available ? 'available' : t.unavailableReason}`).join('\n')}
      >
        <Server aria-hidden className="size-3.5 text-zinc-400" />
        <span className="text-zinc-400">Providers</span>
        <span>{targets.data ? (available.length ? available.map((t) => t.displayName).join(', ') : 'none available') : '…'}</span>
      </span>
      {health.data?.version ? <span className="text-zinc-400">v{health.data.version}</span> : null}
      {session.data?.via === 'cookie' ? (
        <button
          type="button"
          onClick={() => logout.mutate()}
          className="ml-auto inline-flex items-center gap-1 rounded px-2 py-1 text-zinc-200 hover:bg-zinc-800"
        >
          <LogOut aria-hidden className="size-3.5" /> Log out
        </button>
      ) : null}
    </section>
  );
}

/** Left navigation and the instance bar around every signed-in page. */
export function AppShell({ children }: { children: ReactNode }) {
  const settings = useSettings();
  const environmentsOn = settings.data?.experimental.enableEnvironments ?? false;
  return (
    <div className="flex min-h-full flex-col md:flex-row">
      <aside className="shrink-0 border-b border-zinc-800 bg-zinc-950 md:w-56 md:border-r md:border-b-0">
        <div className="flex items-center gap-2 px-4 py-4">
          <img src="/favicon.svg" alt="" className="size-6" />
          <span className="text-base font-semibold tracking-tight text-white">Sandcast</span>
        </div>
        {/* Narrow screens: the items wrap inside the page margin instead of scrolling off its edge. */}
        <nav aria-label="Main" className="flex flex-wrap gap-1 px-4 pb-2 md:flex-col md:px-2">
          {environmentsOn ? (
            <>
              <NavItem to="/environments" icon={<Layers aria-hidden className="size-4" />}>
                Environments
              </NavItem>
              <NavItem to="/sandboxes" icon={<Boxes aria-hidden className="size-4" />}>
                Sandboxes
              </NavItem>
              <NavItem to="/agents" icon={<Bot aria-hidden className="size-4" />}>
                Agents
              </NavItem>
              <NavItem to="/sessions" icon={<PlayCircle aria-hidden className="size-4" />}>
                Sessions
              </NavItem>
              <NavItem to="/fleet" icon={<LayoutGrid aria-hidden className="size-4" />}>
                Fleet
              </NavItem>
            </>
          ) : null}
          <NavItem to="/settings" icon={<Settings aria-hidden className="size-4" />}>
            Settings
          </NavItem>
        </nav>
      </aside>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="border-b border-zinc-800 bg-zinc-950 px-4 py-2.5 md:px-6">
          <InstanceBar />
        </header>
        <main className="mx-auto w-full max-w-6xl flex-1 px-4 py-6 md:px-6">{children}</main>
      </div>
    </div>
  );
}
