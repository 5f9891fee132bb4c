import type { SandcastClient } from '@sandcast/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { BrowserRouter, Navigate, Route, Routes, useLocation } from 'react-router';
import { Toaster } from 'sonner';
import { ClientProvider } from './api/client-context.tsx';
import { errorCode } from './api/errors.ts';
import { useAuthSession } from './api/queries.ts';
import { ErrorState, Skeleton } from './components/States.tsx';
import { AppShell } from './layout/AppShell.tsx';
import { EnvironmentsGate } from './layout/EnvironmentsGate.tsx';
import { AgentCreatePage, AgentPage } from './pages/AgentPage.tsx';
import { AgentsPage } from './pages/AgentsPage.tsx';
import { ConnectionsPage } from './pages/ConnectionsPage.tsx';
import { EnvironmentCreatePage } from './pages/EnvironmentCreatePage.tsx';
import { EnvironmentPage } from './pages/EnvironmentPage.tsx';
import { EnvironmentsPage } from './pages/EnvironmentsPage.tsx';
import { FleetPage } from './pages/FleetPage.tsx';
import { LoginPage } from './pages/LoginPage.tsx';
import { SandboxesPage } from './pages/SandboxesPage.tsx';
import { SessionPage } from './pages/SessionPage.tsx';
import { SessionsPage } from './pages/SessionsPage.tsx';
import { SettingsPage } from './pages/SettingsPage.tsx';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will not fix itself by asking again; a network blip might.
        retry: (count, error) => count < 2 && (errorCode(error) === null || errorCode(error) === 'internal'),
        refetchOnWindowFocus: true,
        staleTime: 5_000,
      },
    },
  });
}

/** Sends people to the login page when the instance needs a key and they have no session. */
function RequireSession({ children }: { children: ReactNode }) {
  const session = useAuthSession();
  const location = useLocation();
  if (session.isPending)
    return (
      <div className="p-8">
        <Skeleton lines={3} label="Checking your session" />
      </div>
    );
  if (session.isError)
    return (
      <div className="p-8">
        <ErrorState error={session.error} onRetry={() => session.refetch()} title="Cannot reach Sandcast" />
      </div>
    );
  if (!session.data.authenticated) return <Navigate to="/login" replace state={{ from: location.pathname }} />;
  if (session.data.role !== 'admin')
    return (
      <div className="p-8">
        <ErrorState
          error={
            new Error(
              'This is an agent key. The web UI manages environments and images, which needs an admin key: log out and log in with one.',
            )
          }
          title="Admin key needed"
        />
      </div>
    );
  return <>{children}</>;
}

function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        path="*"
        element={
          <RequireSession>
            <AppShell>
              <Routes>
                <Route path="/" element={<Navigate to="/environments" replace />} />
                <Route
                  path="/environments"
                  element={
                    <EnvironmentsGate>
                      <EnvironmentsPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/environments/new"
                  element={
                    <EnvironmentsGate>
                      <EnvironmentCreatePage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/environments/:id"
                  element={
                    <EnvironmentsGate>
                      <EnvironmentPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/sandboxes"
                  element={
                    <EnvironmentsGate>
                      <SandboxesPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/agents"
                  element={
                    <EnvironmentsGate>
                      <AgentsPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/agents/new"
                  element={
                    <EnvironmentsGate>
                      <AgentCreatePage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/agents/:id"
                  element={
                    <EnvironmentsGate>
                      <AgentPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/sessions"
                  element={
                    <EnvironmentsGate>
                      <SessionsPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/sessions/:id"
                  element={
                    <EnvironmentsGate>
                      <SessionPage />
                    </EnvironmentsGate>
                  }
                />
                <Route
                  path="/fleet"
                  element={
                    <EnvironmentsGate>
                      <FleetPage />
                    </EnvironmentsGate>
                  }
                />
                <Route path="/settings" element={<SettingsPage />} />
                <Route
                  path="/settings/connections"
                  element={
                    <EnvironmentsGate>
                      <ConnectionsPage />
                    </EnvironmentsGate>
                  }
                />
                <Route path="*" element={<p className="text-sm text-zinc-300">There is no page here. Use the navigation on the left.</p>} />
              </Routes>
            </AppShell>
          </RequireSession>
        }
      />
    </Routes>
  );
}

export function App({ client, queryClient }: { client: SandcastClient; queryClient: QueryClient }) {
  return (
    <ClientProvider client={client}>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <AppRoutes />
        </BrowserRouter>
        {/* At most three at once; toasts about one thing share an id, so a newer one replaces the older. */}
        <Toaster theme="dark" position="bottom-right" richColors closeButton visibleToasts={3} toastOptions={{ duration: 6000 }} />
      </QueryClientProvider>
    </ClientProvider>
  );
}
