import { SANDBOX_SOURCE_LABELS, type SandboxBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';

/** "image tpl_1" or "base" (the environment's provider configuration without a custom image). */
function bootSource(sandbox: Pick<SandboxBody, 'imageId'>): string {
  return sandbox.imageId ? `image ${sandbox.imageId}` : 'base';
}

type Observed = SandboxBody['status'];
type Desired = SandboxBody['desiredStatus'];

/** The observed state each desired one settles in. */
const SETTLED: Record<Desired, Observed> = { ready: 'running', stopped: 'stopped', deleted: 'deleted' };
const MOVING: Record<Desired, string> = { ready: 'being started', stopped: 'being stopped', deleted: 'being deleted' };

/** Observed against desired: "running (desired ready)", "running, desired stopped (being stopped)". */
export function describeState(observed: Observed, desired: Desired): string {
  if (SETTLED[desired] === observed || observed === 'failed' || observed === 'lost') return `${observed} (desired ${desired})`;
  return `${observed}, desired ${desired} (${MOVING[desired]})`;
}

export function renderSandbox(sandbox: SandboxBody, environmentName?: string): string {
  const lines = [
    `id:            ${sandbox.id}`,
    `status:        ${describeState(sandbox.status, sandbox.desiredStatus)}`,
    `generation:    ${sandbox.generation}`,
    `environment:   ${environmentName ? `${environmentName} (${sandbox.environmentId})` : (sandbox.environmentId ?? '-')}`,
    `revision:      ${sandbox.environmentRevisionId}`,
    `provider:      ${sandbox.provider}`,
    `booted from:   ${bootSource(sandbox)}`,
    `source:        ${SANDBOX_SOURCE_LABELS[sandbox.source]}${sandbox.forkedFromId ? ` of ${sandbox.forkedFromId}` : ''}`,
    `durability:    ${sandbox.durability}`,
    `session:       ${sandbox.sessionId ?? '-'}`,
    `last activity: ${formatTime(sandbox.lastActivityAt)}`,
    `created:       ${formatTime(sandbox.createdAt)}`,
  ];
  if (sandbox.failureReason) lines.push(`failure:       ${sandbox.failureReason}`);
  return lines.join('\n');
}

export function renderSandboxList(sandboxes: SandboxBody[], environmentNames: Map<string, string>): string {
  return table(
    ['ID', 'STATUS', 'DESIRED', 'GEN', 'ENVIRONMENT', 'BOOTED FROM', 'SOURCE', 'SESSION', 'PROVIDER', 'CREATED'],
    sandboxes.map((s) => [
      s.id,
      s.status,
      s.desiredStatus,
      String(s.generation),
      (s.environmentId && environmentNames.get(s.environmentId)) ?? s.environmentId ?? '-',
      bootSource(s),
      SANDBOX_SOURCE_LABELS[s.source],
      s.sessionId ?? '-',
      s.provider,
      formatTime(s.createdAt),
    ]),
  );
}
