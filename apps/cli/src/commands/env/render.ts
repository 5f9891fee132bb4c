import type { EnvironmentBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';

export function renderEnvironment(env: EnvironmentBody): string {
  return [
    `name:      ${env.name}`,
    `id:        ${env.id}`,
    `provider:  ${env.provider}`,
    ...(env.connectionId ? [`connection: ${env.connectionId}`] : []),
    `revision:  ${env.currentRevision.number} (${env.currentRevision.id}), made ${formatTime(env.currentRevision.createdAt)}`,
    `updated:   ${formatTime(env.updatedAt)}`,
    `config:    ${JSON.stringify(env.config, null, 2).replaceAll('\n', '\n           ')}`,
    'spec:',
    ...renderSpec(env.spec).map((line) => `  ${line}`),
  ].join('\n');
}

type Spec = EnvironmentBody['spec'];

/** The spec of a revision, one field a line. */
function renderSpec(spec: Spec): string[] {
  const lines = [
    `display name: ${spec.displayName ?? '-'}`,
    `description:  ${spec.description ?? '-'}`,
    `durability:   ${spec.durability}`,
    `when idle:    ${describeLifecycle(spec.lifecycle)}`,
  ];
  if (spec.bootstrap.length === 0) lines.push('bootstrap:    none');
  else {
    lines.push('bootstrap:');
    // A multi-line command keeps its lines under its first, so the list stays readable.
    for (const [i, command] of spec.bootstrap.entries()) {
      const [first, ...rest] = command.split('\n');
      lines.push(`  ${i + 1}. ${first}`, ...rest.map((line) => `  ${' '.repeat(String(i + 1).length + 2)}${line}`));
    }
  }
  lines.push(`network:      ${describeContainment(spec.containment)}`);
  return lines;
}

/** "stops after 3 min without activity", "keeps running (idle after 180 s)". */
export function describeLifecycle(lifecycle: Spec['lifecycle']): string {
  const after = duration(lifecycle.idleAfterSeconds);
  switch (lifecycle.idleAction) {
    case 'stop':
      return `stops after ${after} without activity`;
    case 'checkpoint_and_stop':
      return `checkpoints and stops after ${after} without activity`;
    case 'keep_running':
      return `keeps running (idle after ${after})`;
  }
}

export function describeContainment(containment: { network: Spec['containment']['network']; hosts: string[] }): string {
  if (containment.network === 'deny') return 'deny (no route out)';
  if (containment.network === 'allow') return 'allow (any public host, through the egress proxy)';
  return `allowlist: ${containment.hosts.join(', ') || 'no hosts'}`;
}

/** 180 → "3 min", 90 → "90 s", 7200 → "2 h". */
function duration(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

export function renderEnvironmentList(envs: EnvironmentBody[]): string {
  return table(
    ['NAME', 'PROVIDER', 'REVISION', 'ID'],
    envs.map((e) => [e.name, e.provider, String(e.currentRevision.number), e.id]),
  );
}

/** What an edit did to the active custom image, and what to do about a detached one. */
export function describeReconciliation(
  name: string,
  reconciliation:
    | { action: 'none' | 'relinked' | 'detached'; templateId?: string | undefined; driftedPaths?: string[] | undefined }
    | undefined,
): string[] {
  switch (reconciliation?.action) {
    case undefined:
    case 'none':
      return [];
    case 'relinked':
      return [`Custom image ${reconciliation.templateId ?? ''}: still active (only runtime settings changed); runs keep booting from it.`];
    case 'detached':
      return [
        `Custom image ${reconciliation.templateId ?? ''} detached: the change moved the boot source (${(reconciliation.driftedPaths ?? []).join(', ') || 'config'}), ` +
          'so runs now use the base configuration.',
        `To use the image anyway: sandcast image relink ${name} --confirm-boot-source-drift   To build a new one: sandcast image setup ${name}`,
      ];
  }
}
