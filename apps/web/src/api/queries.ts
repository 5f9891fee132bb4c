import { useQueries, useQuery } from '@tanstack/react-query';
import { sandboxSettled } from '../modules/sandboxes/SandboxState.tsx';
import { useClient } from './client-context.tsx';
import { queryKeys } from './query-keys.ts';

export function useHealth() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.health, queryFn: () => client.health(), staleTime: 60_000 });
}

export function useAuthSession() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.authSession, queryFn: () => client.auth.session(), staleTime: 30_000 });
}

export function useSettings() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.settings, queryFn: () => client.settings.get() });
}

export function useTargets() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.targets, queryFn: () => client.targets(), staleTime: 30_000 });
}

/** The provider's one display name ("Local (namespaces)"), the same on every page; its id until targets load. */
export function useProviderName(): (providerId: string) => string {
  const targets = useTargets();
  return (providerId) => targets.data?.find((t) => t.provider === providerId)?.displayName ?? providerId;
}

export function useEnvironments(enabled = true) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.environments, queryFn: () => client.environments.list(), enabled });
}

export function useEnvironment(id: string, enabled = true) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.environment(id), queryFn: () => client.environments.get(id), enabled });
}

export function useRevisions(id: string) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.revisions(id), queryFn: () => client.environments.revisions(id) });
}

/** The custom image overview; polled quickly while a setup session is moving on its own. */
export function useCustomImageOverview(environmentId: string) {
  const client = useClient();
  return useQuery({
    queryKey: queryKeys.customImageOverview(environmentId),
    queryFn: () => client.customImages.overview(environmentId),
    refetchInterval: (query) => {
      const status = query.state.data?.activeSession?.status;
      if (status === 'starting' || status === 'capturing') return 1000;
      if (status === 'waiting_for_user') return 10_000;
      return false;
    },
  });
}

export function useCustomImageHistory(environmentId: string) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.customImageHistory(environmentId), queryFn: () => client.customImages.history(environmentId) });
}

/** Every sandbox; polled while one of them is still moving toward its desired state. */
export function useSandboxes() {
  const client = useClient();
  return useQuery({
    queryKey: queryKeys.sandboxes,
    queryFn: () => client.sandboxes.list(),
    refetchInterval: (query) => (query.state.data?.some((s) => !sandboxSettled(s.desiredStatus, s.status)) ? 1000 : false),
  });
}

/** Every environment's revisions at once (binding pickers name a revision's environment). */
export function useAllRevisions(environmentIds: string[]) {
  const client = useClient();
  return useQueries({
    queries: environmentIds.map((id) => ({ queryKey: queryKeys.revisions(id), queryFn: () => client.environments.revisions(id) })),
  });
}

export function useAgents(options: { includeArchived?: boolean } = {}) {
  const client = useClient();
  return useQuery({
    queryKey: [...queryKeys.agents, { includeArchived: options.includeArchived ?? false }],
    queryFn: () => client.agents.list(options),
  });
}

export function useAgent(id: string, enabled = true) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.agent(id), queryFn: () => client.agents.get(id), enabled: enabled && id !== '' });
}

export function useAgentVersions(id: string) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.agentVersions(id), queryFn: () => client.agents.versions(id) });
}

/** Every sandbox with its attention flags (the Fleet page); refreshed while any is on its way somewhere. */
export function useFleetOverview(options: { includeDeleted: boolean }) {
  const client = useClient();
  return useQuery({
    queryKey: [...queryKeys.fleet, options.includeDeleted],
    queryFn: () => client.fleet.overview(options),
    refetchInterval: (query) => (query.state.data?.some((s) => !sandboxSettled(s.desiredState, s.observedState)) ? 2000 : 10_000),
  });
}

export function useSessions() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.sessions, queryFn: () => client.sessions.list() });
}

export function useSession(id: string) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.session(id), queryFn: () => client.sessions.get(id) });
}

/** A session's primary sandbox; polled while the reconciler is still moving it toward what was asked. */
export function useSessionSandbox(id: string, enabled = true) {
  const client = useClient();
  return useQuery({
    queryKey: queryKeys.sessionSandbox(id),
    queryFn: () => client.sessions.sandbox(id),
    enabled,
    refetchInterval: (query) => {
      const sandbox = query.state.data;
      return !sandbox || sandboxSettled(sandbox.desiredState, sandbox.observedState) ? false : 1000;
    },
  });
}

/** Provider connections (their secrets only as placeholders). */
export function useConnections(enabled = true) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.connections, queryFn: () => client.connections.list(), enabled });
}
