import type { SessionBody, SessionSandboxBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';
import { describeContainment, describeLifecycle } from '../env/render.ts';
import { describeState } from '../sandbox/render.ts';

const CAPABILITY_WORDS: Record<keyof SessionSandboxBody['capabilities'], string> = {
  nativeProcesses: 'native processes',
  packages: 'packages',
  pty: 'terminal',
  ports: 'ports',
  portableCheckpoint: 'portable checkpoints',
  networkEnforced: 'network enforcement',
};

/** "ended 3 min ago (…)" or "active". */
function sessionStatus(session: SessionBody): string {
  return session.status === 'ended' ? `ended ${formatTime(session.endedAt)}` : 'active';
}

/** The agent a session ran, by name when known: "coder (agt_1), version 3". */
export interface AgentLabel {
  name: string;
  versionNumber?: number | undefined;
}

export function renderSession(session: SessionBody, agent?: AgentLabel): string {
  const version =
    agent?.versionNumber === undefined ? session.agentVersionId : `version ${agent.versionNumber} (${session.agentVersionId})`;
  return [
    `id:       ${session.id}`,
    `agent:    ${agent ? `${agent.name} (${session.agentId})` : session.agentId}, ${version}`,
    `status:   ${sessionStatus(session)}`,
    `binding:  ${session.bindingName ?? '-'}`,
    `sandbox:  ${session.primarySandboxId ?? 'none (the agent has no sandbox)'}`,
    `started:  ${formatTime(session.createdAt)}`,
  ].join('\n');
}

export function renderSessionList(sessions: SessionBody[], agentNames: Map<string, string>): string {
  return table(
    ['ID', 'AGENT', 'STATUS', 'BINDING', 'SANDBOX', 'STARTED'],
    sessions.map((s) => [
      s.id,
      agentNames.get(s.agentId) ?? s.agentId,
      s.status,
      s.bindingName ?? '-',
      s.primarySandboxId ?? '-',
      formatTime(s.createdAt),
    ]),
  );
}

/** The session's Workspace: every field of its primary sandbox as the session pinned it. */
export function renderSessionSandbox(view: SessionSandboxBody, environmentName?: string): string {
  const environment = environmentName ? `${environmentName} (${view.environmentId})` : (view.environmentId ?? 'deleted');
  const revision =
    view.environmentRevisionNumber === null
      ? view.environmentRevisionId
      : `${view.environmentRevisionNumber} (${view.environmentRevisionId})`;
  const capabilities = Object.entries(CAPABILITY_WORDS);
  const has = capabilities.filter(([key]) => view.capabilities[key as keyof typeof CAPABILITY_WORDS]).map(([, words]) => words);
  const lacks = capabilities.filter(([key]) => !view.capabilities[key as keyof typeof CAPABILITY_WORDS]).map(([, words]) => words);
  const lines = [
    `sandbox:       ${view.sandboxId}`,
    `session:       ${view.sessionId}`,
    `binding:       ${view.bindingName}`,
    `environment:   ${environment}`,
    `revision:      ${revision} (pinned)`,
    `image:         ${view.imageId ? `custom image ${view.imageId}` : 'base (no custom image)'}`,
    `target:        ${view.target.provider}`,
    `containment:   ${describeContainment(view.containment)}, ${view.containment.networkEnforced ? 'enforced by the provider' : 'not enforced by this provider'}`,
    `capabilities:  ${has.join(', ') || 'none'}${lacks.length ? `; not: ${lacks.join(', ')}` : ''}`,
    `durability:    ${view.durability}`,
    `recovery:      ${view.recoveryClass}`,
    `when idle:     ${describeLifecycle(view.lifecycle)}`,
    `state:         ${describeState(view.observedState, view.desiredState)}`,
    `generation:    ${view.generation}`,
    `checkpoint:    ${view.currentCheckpointId ?? 'none'}`,
    `last activity: ${formatTime(view.lastActivityAt)}`,
  ];
  if (view.failureReason) lines.push(`failure:       ${view.failureReason}`);
  lines.push(`allowed:       ${view.allowedActions.join(', ') || 'none'}`);
  return lines.join('\n');
}
