import type { AgentBody, AgentVersionBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';
import { describeRevision, type RevisionInfo } from './revision-index.ts';

type Policy = AgentVersionBody['sandboxPolicy'];
type Binding = Policy['bindings'][string];

const MODE_WORDS: Record<Policy['mode'], string> = {
  fixed: 'every session gets its one sandbox; a session may not choose',
  selectable: 'a session may pick a binding (session start --use NAME)',
  configurable: 'a session may pick a binding or change allowed settings (--use, --inline-config)',
  none: 'sessions get no sandbox',
};

/** Bindings in name order: the store keeps no order of its own. */
const bindingsOf = (policy: Policy) => Object.entries(policy.bindings).sort(([a], [b]) => a.localeCompare(b));
const bindingNames = (policy: Policy) =>
  bindingsOf(policy)
    .map(([name]) => name)
    .join(', ') || '-';

const hasFleet = (version: AgentVersionBody) => version.capabilities.includes('sandbox_fleet');

function durabilityWords(binding: Binding, index: Map<string, RevisionInfo>): string {
  if (binding.durability) return `${binding.durability} (set on the binding)`;
  const info = index.get(binding.environmentRevisionId);
  return info ? `${info.durability} (the revision's)` : "the revision's";
}

function bindingTable(policy: Policy, index: Map<string, RevisionInfo>): string {
  return table(
    ['BINDING', 'REVISION', 'DURABILITY', 'REVISION ID'],
    bindingsOf(policy).map(([name, b]) => [
      name === policy.default ? `${name} (default)` : name,
      describeRevision(b.environmentRevisionId, index),
      durabilityWords(b, index),
      b.environmentRevisionId,
    ]),
  );
}

export function renderAgent(agent: AgentBody, versions: AgentVersionBody[], index: Map<string, RevisionInfo>): string {
  const version = agent.currentVersion;
  const policy = version.sandboxPolicy;
  const lines = [
    `name:         ${agent.name}`,
    `id:           ${agent.id}`,
    `display name: ${agent.displayName ?? '-'}`,
    `description:  ${agent.description ?? '-'}`,
    `status:       ${agent.archivedAt ? `archived ${formatTime(agent.archivedAt)}` : 'active'}`,
    `version:      ${version.number} (${version.id}), made ${formatTime(version.createdAt)}`,
    `mode:         ${policy.mode} — ${MODE_WORDS[policy.mode]}`,
    `fleet:        ${hasFleet(version) ? 'yes (resource sandboxes beside the primary one)' : 'no'}`,
  ];
  if (policy.mode !== 'none') lines.push('sandboxes:', indent(bindingTable(policy, index)));
  if (versions.length > 0) lines.push('versions:', indent(renderVersions(versions)));
  return lines.join('\n');
}

const indent = (block: string) =>
  block
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

function renderVersions(versions: AgentVersionBody[]): string {
  return table(
    ['VERSION', 'MODE', 'DEFAULT', 'BINDINGS', 'FLEET', 'MADE'],
    versions.map((v) => [
      String(v.number),
      v.sandboxPolicy.mode,
      v.sandboxPolicy.default ?? '-',
      bindingNames(v.sandboxPolicy),
      hasFleet(v) ? 'yes' : 'no',
      formatTime(v.createdAt),
    ]),
  );
}

export function renderAgentList(agents: AgentBody[]): string {
  return table(
    ['NAME', 'MODE', 'BINDINGS', 'DEFAULT', 'VERSION', 'STATUS', 'ID'],
    agents.map((a) => {
      const policy = a.currentVersion.sandboxPolicy;
      return [
        a.name,
        policy.mode,
        bindingNames(policy),
        policy.default ?? '-',
        String(a.currentVersion.number),
        a.archivedAt ? 'archived' : 'active',
        a.id,
      ];
    }),
  );
}

/** What an update changed, one line each, ending with the version it made (or that it made none). */
export function describeAgentChanges(before: AgentBody, after: AgentBody, index: Map<string, RevisionInfo>): string[] {
  const lines: string[] = [];
  const text = (v: string | null) => (v === null ? '-' : JSON.stringify(v));
  if (before.displayName !== after.displayName) lines.push(`display name: ${text(before.displayName)} → ${text(after.displayName)}`);
  if (before.description !== after.description) lines.push(`description: ${text(before.description)} → ${text(after.description)}`);
  const [was, now] = [before.currentVersion.sandboxPolicy, after.currentVersion.sandboxPolicy];
  if (was.mode !== now.mode) lines.push(`mode: ${was.mode} → ${now.mode}`);
  if (was.default !== now.default) lines.push(`default: ${was.default ?? '-'} → ${now.default ?? '-'}`);
  for (const name of [...new Set([...Object.keys(was.bindings), ...Object.keys(now.bindings)])].sort()) {
    const [a, b] = [was.bindings[name], now.bindings[name]];
    if (!a && b)
      lines.push(`+ ${name}: ${describeRevision(b.environmentRevisionId, index)}${b.durability ? `, durability ${b.durability}` : ''}`);
    else if (a && !b) lines.push(`- ${name}`);
    else if (a && b) {
      if (a.environmentRevisionId !== b.environmentRevisionId)
        lines.push(`~ ${name}: ${describeRevision(a.environmentRevisionId, index)} → ${describeRevision(b.environmentRevisionId, index)}`);
      if (a.durability !== b.durability)
        lines.push(`~ ${name} durability: ${a.durability ?? "the revision's"} → ${b.durability ?? "the revision's"}`);
    }
  }
  if (hasFleet(before.currentVersion) !== hasFleet(after.currentVersion))
    lines.push(`fleet: ${hasFleet(after.currentVersion) ? 'no → yes' : 'yes → no'}`);
  const [from, to] = [before.currentVersion.number, after.currentVersion.number];
  lines.push(from === to ? `version ${to} (no new version: only the display name or description changed)` : `version ${from} → ${to}`);
  return lines;
}
