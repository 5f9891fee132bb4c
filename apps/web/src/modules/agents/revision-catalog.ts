import type { EnvironmentBody, EnvironmentRevisionBody } from '@sandcast/contracts';
import { useAllRevisions, useEnvironments } from '../../api/queries.ts';

interface PinnedRevision {
  environment: EnvironmentBody;
  revision: EnvironmentRevisionBody;
  /** The environment has a newer revision than this one. */
  outdated: boolean;
}

export interface RevisionCatalog {
  environments: EnvironmentBody[];
  /** An environment's revisions, newest first. */
  revisionsOf: (environmentId: string) => EnvironmentRevisionBody[];
  /** The environment and revision a binding pins; null when no environment here has it. */
  find: (revisionId: string) => PinnedRevision | null;
  isPending: boolean;
  error: unknown;
  refetch: () => void;
}

/**
 * Every environment with its revisions: bindings store a bare revision id, and the screens name
 * its environment and number beside it.
 */
export function useRevisionCatalog(): RevisionCatalog {
  const environments = useEnvironments();
  const list = environments.data ?? [];
  const revisions = useAllRevisions(list.map((e) => e.id));
  const byEnvironment = new Map<string, EnvironmentRevisionBody[]>();
  list.forEach((environment, i) => {
    const data = revisions[i]?.data ?? [];
    byEnvironment.set(
      environment.id,
      [...data].sort((a, b) => b.number - a.number),
    );
  });
  const failed = revisions.find((r) => r.isError);
  return {
    environments: list,
    revisionsOf: (environmentId) => byEnvironment.get(environmentId) ?? [],
    find: (revisionId) => {
      for (const environment of list) {
        const revision = byEnvironment.get(environment.id)?.find((r) => r.id === revisionId);
        if (revision) return { environment, revision, outdated: environment.currentRevision.id !== revision.id };
      }
      return null;
    },
    isPending: environments.isPending || revisions.some((r) => r.isPending),
    error: environments.error ?? failed?.error ?? null,
    refetch: () => {
      void environments.refetch();
      for (const r of revisions) if (r.isError) void r.refetch();
    },
  };
}
