import type { EnvironmentRevisionBody } from '@sandcast/contracts';
import { useProviderName, useRevisions } from '../../api/queries.ts';
import { Section } from '../../components/Section.tsx';
import { QueryState } from '../../components/States.tsx';
import { Time } from '../../components/time.tsx';

function RevisionRow({ revision, current }: { revision: EnvironmentRevisionBody; current: boolean }) {
  const providerName = useProviderName();
  return (
    <li className="py-2">
      <details>
        <summary className="flex cursor-pointer flex-wrap items-center gap-3 text-sm select-none">
          <span className="font-mono text-zinc-100">#{revision.number}</span>
          <span className="text-zinc-300">{providerName(revision.provider)}</span>
          <span className="text-zinc-400">
            <Time iso={revision.createdAt} />
          </span>
          {current ? <span className="rounded bg-zinc-800 px-1.5 py-0.5 text-xs text-zinc-200">current</span> : null}
        </summary>
        <div className="mt-2 grid gap-2 md:grid-cols-2">
          <div>
            <p className="text-xs text-zinc-400">Configuration</p>
            <pre className="mt-1 overflow-x-auto rounded bg-zinc-950 p-2 font-mono text-xs text-zinc-300">
              {JSON.stringify(revision.config, null, 2)}
            </pre>
          </div>
          <div>
            <p className="text-xs text-zinc-400">Sandbox spec</p>
            <pre className="mt-1 overflow-x-auto rounded bg-zinc-950 p-2 font-mono text-xs text-zinc-300" data-testid="revision-spec">
              {JSON.stringify(revision.spec, null, 2)}
            </pre>
          </div>
        </div>
      </details>
    </li>
  );
}

/** Every revision, newest first; each is immutable and may be pinned by sessions. */
export function RevisionHistory({ environmentId, currentRevisionId }: { environmentId: string; currentRevisionId: string }) {
  const revisions = useRevisions(environmentId);
  return (
    <Section
      id="revisions"
      title="Revision history"
      description="Every saved change is a new, immutable revision. Runs pin the revision they started with."
    >
      <QueryState query={revisions} loading="Loading revisions">
        {(data) => (
          <ul className="divide-y divide-zinc-800">
            {data.map((r) => (
              <RevisionRow key={r.id} revision={r} current={r.id === currentRevisionId} />
            ))}
          </ul>
        )}
      </QueryState>
    </Section>
  );
}
