import type { SandboxBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';

/** "image tpl_1" or "base" (the environment's provider configuration without a custom image). */
function bootSource(sandbox: SandboxBody): string {
  return sandbox.imageId ? `image ${sandbox.imageId}` : 'base';
}

export function renderSandbox(sandbox: SandboxBody, environmentName?: string): string {
  const lines = [
    `id:          ${sandbox.id}`,
    `status:      ${sandbox.status}${settling(sandbox) ? ` (being ${sandbox.desiredStatus === 'deleted' ? 'deleted' : 'stopped'})` : ''}`,
    `environment: ${environmentName ? `${environmentName} (${sandbox.environmentId})` : (sandbox.environmentId ?? '-')}`,
    `revision:    ${sandbox.environmentRevisionId}`,
    `provider:    ${sandbox.provider}`,
    `booted from: ${bootSource(sandbox)}`,
    `created:     ${formatTime(sandbox.createdAt)}`,
  ];
  if (sandbox.failureReason) lines.push(`failure:     ${sandbox.failureReason}`);
  return lines.join('\n');
}

/** True while the sandbox is on its way to a pause or a deletion someone asked for. */
function settling(sandbox: SandboxBody): boolean {
  return (sandbox.desiredStatus === 'deleted' || sandbox.desiredStatus === 'stopped') && sandbox.status !== sandbox.desiredStatus;
}

export function renderSandboxList(sandboxes: SandboxBody[], environmentNames: Map<string, string>): string {
  return table(
    ['ID', 'STATUS', 'ENVIRONMENT', 'BOOTED FROM', 'PROVIDER', 'CREATED'],
    sandboxes.map((s) => [
      s.id,
      s.status,
      (s.environmentId && environmentNames.get(s.environmentId)) ?? s.environmentId ?? '-',
      bootSource(s),
      s.provider,
      formatTime(s.createdAt),
    ]),
  );
}
