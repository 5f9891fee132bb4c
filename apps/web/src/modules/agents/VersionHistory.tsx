import type { AgentVersionBody } from '@sandcast/contracts';
import { useAgentVersions } from '../../api/queries.ts';
import { Section } from '../../components/Section.tsx';
import { QueryState } from '../../components/States.tsx';
import { Time } from '../../components/time.tsx';
import { MODE_WORDS } from './PolicyEditor.tsx';
import type { RevisionCatalog } from './revision-catalog.ts';

function VersionRow({ version, current, catalog }: { version: AgentVersionBody; current: boolean; catalog: RevisionCatalog }) {
  const bindings = Object.entries(version.sandboxPolicy.bindings);
  return (
    <li className="py-2">
      <details>
        <summary className="flex cursor-pointer flex-wrap items-center gap-3 text-sm select-none">
          <span className="font-mono text-zinc-100">v{version.number}</span>
          <span className="text-zinc-300">{MODE_WORDS[version.sandboxPolicy.mode].label}</span>
          <span className="text-zinc-400">{bindings.length === 1 ? '1 binding' : `${bindings.length} bindings`}</span>
          <span className="text-zinc-400">
            <Time iso={version.createdAt} />
          </span>
          {current ? <span className="rounded bg-zinc-800 px-1.5 py-0.5 text-xs text-zinc-200">current</span> : null}
        </summary>
        <dl className="mt-2 space-y-1 rounded bg-zinc-950 p-2 text-xs text-zinc-300">
          {bindings.map(([name, binding]) => {
            const pinned = catalog.find(binding.environmentRevisionId);
            return (
              <div key={name} className="flex flex-wrap gap-x-2">
                <dt className="font-mono text-zinc-100">
                  {name}
                  {version.sandboxPolicy.default === name ? ' (default)' : ''}
                </dt>
                <dd>
                  {pinned ? (
                    `${pinned.environment.name} #${pinned.revision.number}`
                  ) : (
                    <code className="font-mono">{binding.environmentRevisionId}</code>
                  )}
                  {binding.durability ? `, durability ${binding.durability}` : ''}
                </dd>
              </div>
            );
          })}
          <div className="flex gap-x-2">
            <dt className="text-zinc-400">Capabilities</dt>
            <dd>{version.capabilities.length ? version.capabilities.join(', ') : 'none'}</dd>
          </div>
        </dl>
      </details>
    </li>
  );
}

/** Every version of an agent, newest first; sessions pin the one they started with. */
export function VersionHistory({
  agentId,
  currentVersionId,
  catalog,
}: {
  agentId: string;
  currentVersionId: string;
  catalog: RevisionCatalog;
}) {
  const versions = useAgentVersions(agentId);
  return (
    <Section
      id="versions"
      title="Version history"
      description="Every save is a new, immutable version. Sessions pin the version they started with."
    >
      <QueryState query={versions} loading="Loading versions">
        {(data) => (
          <ul className="divide-y divide-zinc-800">
            {[...data]
              .sort((a, b) => b.number - a.number)
              .map((v) => (
                <VersionRow key={v.id} version={v} current={v.id === currentVersionId} catalog={catalog} />
              ))}
          </ul>
        )}
      </QueryState>
    </Section>
  );
}
