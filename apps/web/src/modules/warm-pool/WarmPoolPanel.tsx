import type { WarmPoolState } from '@sandcast/contracts';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../api/client-context.tsx';
import { queryKeys } from '../../api/query-keys.ts';
import { Section } from '../../components/Section.tsx';
import { QueryState, Spinner } from '../../components/States.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { Time } from '../../components/time.tsx';

/** How often the panel looks again while members boot (the reconciler fills between its passes). */
const REFRESH_MS = 5_000;

function Figure({ label, value, testId }: { label: string; value: number; testId: string }) {
  return (
    <div className="rounded border border-zinc-800 bg-zinc-950 px-3 py-2">
      <dt className="text-xs text-zinc-400">{label}</dt>
      <dd className="font-mono text-lg text-zinc-100" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

function PoolBody({ pool }: { pool: WarmPoolState }) {
  if (pool.size === 0) {
    return (
      <p className="text-sm text-zinc-300">
        No warm pool: sandboxes boot when they are asked for. Set a pool size in the sandbox spec to keep some booted ahead.
      </p>
    );
  }
  const full = pool.ready >= pool.size;
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-2 text-sm">
        {full ? (
          <StatusBadge tone="active">Full</StatusBadge>
        ) : pool.booting > 0 ? (
          <span className="inline-flex items-center gap-2 text-zinc-200">
            <Spinner /> Filling…
          </span>
        ) : (
          <StatusBadge tone="warning">Short</StatusBadge>
        )}
        <span className="text-zinc-400">
          Members older than {pool.maxAgeSeconds} s are replaced; a change of revision or image replaces them all.
        </span>
      </div>
      <dl className="grid grid-cols-3 gap-2 sm:max-w-md">
        <Figure label="Size" value={pool.size} testId="pool-size" />
        <Figure label="Ready" value={pool.ready} testId="pool-ready" />
        <Figure label="Booting" value={pool.booting} testId="pool-booting" />
      </dl>
      {pool.lastRefillError ? (
        <p className="text-sm text-red-300" role="alert" data-testid="pool-error">
          The last refill stopped short: {pool.lastRefillError}
        </p>
      ) : null}
      {pool.lastRefillAt ? (
        <p className="text-xs text-zinc-400">
          Last refill <Time iso={pool.lastRefillAt} />
        </p>
      ) : null}
    </div>
  );
}

/** The environment's warm pool: members ready to hand out, booting, and why the last refill fell short. */
export function WarmPoolPanel({ environmentId }: { environmentId: string }) {
  const client = useClient();
  const pool = useQuery({
    queryKey: queryKeys.warmPool(environmentId),
    queryFn: () => client.sandboxes.warmPool(environmentId),
    refetchInterval: (query) =>
      query.state.data && query.state.data.size > 0 && query.state.data.ready < query.state.data.size ? REFRESH_MS : false,
  });
  return (
    <Section
      id="warm-pool"
      title="Warm pool"
      description="Sandboxes booted ahead from the current revision and image. Creating a sandbox or starting a session takes one when it can."
    >
      <QueryState query={pool} loading="Loading warm pool" errorTitle="Could not load the warm pool">
        {(data) => <PoolBody pool={data} />}
      </QueryState>
    </Section>
  );
}
