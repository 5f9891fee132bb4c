import { useQuery } from '@tanstack/react-query';
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

export function useEnvironment(id: string) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.environment(id), queryFn: () => client.environments.get(id) });
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

export function useSandboxes() {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.sandboxes, queryFn: () => client.sandboxes.list() });
}

/** Provider connections (their secrets only as placeholders). */
export function useConnections(enabled = true) {
  const client = useClient();
  return useQuery({ queryKey: queryKeys.connections, queryFn: () => client.connections.list(), enabled });
}
