import type { EnvironmentBody } from '@sandcast/contracts';
import { table } from '../../format.ts';

export function renderEnvironment(env: EnvironmentBody): string {
  return [
    `name:      ${env.name}`,
    `id:        ${env.id}`,
    `provider:  ${env.provider}`,
    `revision:  ${env.currentRevision.number} (${env.currentRevision.id}, ${env.currentRevision.createdAt})`,
    `updated:   ${env.updatedAt}`,
    `config:    ${JSON.stringify(env.config, null, 2).replaceAll('\n', '\n           ')}`,
  ].join('\n');
}

export function renderEnvironmentList(envs: EnvironmentBody[]): string {
  return table(
    ['NAME', 'PROVIDER', 'REVISION', 'ID'],
    envs.map((e) => [e.name, e.provider, String(e.currentRevision.number), e.id]),
  );
}
