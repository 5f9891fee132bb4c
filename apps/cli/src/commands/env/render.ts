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
  ].join('\n');
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
