import type {
  CheckpointBody,
  CustomImageOverview,
  CustomImageTemplateBody,
  EnvironmentBody,
  EnvironmentRevisionBody,
  FleetSandboxBody,
  SandboxAction,
  SandboxBody,
  SessionBody,
  SessionSandboxBody,
  SetupSessionBody,
} from '@sandcast/contracts';
import {
  bootSourceDrift,
  type Checkpoint,
  type CustomImageTemplate,
  type Durability,
  type Environment,
  type EnvironmentRevision,
  FLEET_DEFAULT_RESERVATION,
  type Sandbox,
  SETUP_SESSION_LABELS,
  type Session,
  type SetupSession,
} from '@sandcast/core';
import type { RegisteredProvider } from '../providers/provider-registry.ts';
import { maskConfig } from '../services/config-secrets.ts';
import { capabilityOf } from '../services/custom-images/capability.ts';
import type { ImagesOverview } from '../services/custom-images/custom-images.service.ts';
import type { FleetView } from '../services/sessions/fleet.service.ts';

/**
 * The one layer that turns domain records into API answers (decision 0012): services return
 * records, routes answer with these. Secrets are masked here, internal fields are dropped here.
 */

export function presentEnvironment(environment: Environment): EnvironmentBody {
  return { ...environment, config: maskConfig(environment.config), connectionId: environment.connectionId ?? null };
}

export function presentRevision(revision: EnvironmentRevision): EnvironmentRevisionBody {
  return { ...revision, config: maskConfig(revision.config) };
}

export function presentSession(session: SetupSession): SetupSessionBody {
  return { ...session, statusLabel: SETUP_SESSION_LABELS[session.status] };
}

export function presentTemplate(template: CustomImageTemplate): CustomImageTemplateBody {
  const { linkedBootSource: _omitted, ...rest } = template;
  return rest;
}

/** A sandbox as answered; `egress` is what it moved through the proxy (GET one sandbox says it). */
export function presentSandbox(sandbox: Sandbox, egress?: SandboxBody['egress']): SandboxBody {
  const {
    providerInstanceId: _instance,
    createdByKeyId: _key,
    createdByRole: _role,
    bindingName: _binding,
    spec,
    configOverrides: _overrides,
    reservation: _reservation,
    pooled: _pooled,
    ...rest
  } = sandbox;
  return { ...rest, durability: spec.durability, ...(egress === undefined ? {} : { egress }) };
}

export function presentOverview(overview: ImagesOverview): CustomImageOverview {
  const { active, context, latestSession } = overview;
  const matches = active ? active.linkedFingerprint === context.fingerprint : null;
  return {
    activeTemplate: active ? presentTemplate(active) : null,
    activeTemplateMatchesConfig: matches,
    activeTemplateDrift: active && !matches ? { paths: bootSourceDrift(active.linkedBootSource, context.bootSource) } : null,
    activeSession: overview.activeSession ? presentSession(overview.activeSession) : null,
    latestSession: latestSession ? presentSession(latestSession) : null,
    capability: capabilityOf(context.registered.provider.capabilities),
  };
}

export function presentAgentSession(session: Session): SessionBody {
  const { createdByRole: _role, createdByKeyId: _key, ...rest } = session;
  return rest;
}

/** What survives a loss of the compute, for each durability. */
const RECOVERY_CLASSES: Record<Durability, string> = {
  none: 'ephemeral: nothing survives a loss of the compute; operations then answer compute_lost — end the session and start a new one',
  provider_snapshot: "provider snapshot: the disk survives through the provider's snapshots; running processes and open terminals do not",
  checkpointed:
    'checkpointed: the workspace is restored from its last checkpoint onto replacement compute; running processes, open terminals and memory do not survive',
};

/** What a caller may do with a session's sandbox now, from its state. */
function allowedActions(session: Session, sandbox: Sandbox, registered: RegisteredProvider | null): SandboxAction[] {
  if (session.status === 'ended' || sandbox.status === 'deleted') return [];
  const flags = registered?.provider.capabilities;
  switch (sandbox.status) {
    case 'running':
      return ['exec', 'files', ...(flags?.pty ? (['terminal'] as const) : []), ...(flags?.stopStart ? (['stop'] as const) : []), 'end'];
    case 'stopped':
      return [...(flags?.stopStart ? (['start'] as const) : []), 'end'];
    case 'lost':
      // The next operation recovers a checkpointed sandbox onto new compute.
      return sandbox.spec.durability === 'checkpointed' ? ['exec', 'files', 'end'] : ['end'];
    case 'starting':
    case 'failed':
      return ['end'];
    default: {
      const never: never = sandbox.status;
      return never;
    }
  }
}

/** `GET /api/sessions/:id/sandbox`: the primary sandbox as its session pinned it. */
export function presentSessionSandbox(view: {
  session: Session;
  sandbox: Sandbox;
  revisionNumber: number | null;
  registered: RegisteredProvider | null;
}): SessionSandboxBody {
  const { session, sandbox, registered } = view;
  const flags = registered?.provider.capabilities;
  // `deny` holds everywhere (no route out); anything else only where the egress proxy is.
  const networkEnforced = sandbox.spec.containment.network === 'deny' || flags?.egressProxy === true;
  // Sandboxes of every provider registered today run real processes and can install packages.
  const native = flags?.pty ?? false;
  return {
    sandboxId: sandbox.id,
    sessionId: session.id,
    environmentId: sandbox.environmentId,
    environmentRevisionId: sandbox.environmentRevisionId,
    environmentRevisionNumber: view.revisionNumber,
    imageId: sandbox.imageId,
    bindingName: sandbox.bindingName ?? session.bindingName ?? '',
    target: { provider: sandbox.provider },
    containment: { ...sandbox.spec.containment, networkEnforced },
    durability: sandbox.spec.durability,
    recoveryClass: RECOVERY_CLASSES[sandbox.spec.durability],
    lifecycle: sandbox.spec.lifecycle,
    capabilities: {
      nativeProcesses: native,
      packages: native,
      pty: flags?.pty ?? false,
      ports: flags?.portForward ?? false,
      // Checkpoints that move between providers do not exist yet.
      portableCheckpoint: false,
      networkEnforced,
    },
    desiredState: sandbox.desiredStatus,
    observedState: sandbox.status,
    failureReason: sandbox.failureReason,
    generation: sandbox.generation,
    currentCheckpointId: sandbox.currentCheckpointId,
    lastActivityAt: sandbox.lastActivityAt,
    allowedActions: allowedActions(session, sandbox, registered),
  };
}

/** A checkpoint as the API answers it; `current` when it is the one a recovery would restore. */
export function presentCheckpoint(checkpoint: Checkpoint, currentId: string | null): CheckpointBody {
  return {
    id: checkpoint.id,
    generation: checkpoint.generation,
    trigger: checkpoint.trigger,
    storedBytes: checkpoint.storedBytes,
    totalBytes: checkpoint.totalBytes,
    fileCount: checkpoint.fileCount,
    changedPaths: checkpoint.changedPaths,
    createdAt: checkpoint.createdAt,
    attachedAt: checkpoint.attachedAt,
    current: checkpoint.id === currentId,
  };
}

/** A resource sandbox as its session sees it: its logical id, never the sandbox or provider id. */
export function presentFleetSandbox({ sandbox, revisionNumber }: FleetView): FleetSandboxBody {
  return {
    id: sandbox.logicalId!,
    sessionId: sandbox.sessionId!,
    bindingName: sandbox.bindingName,
    environmentId: sandbox.environmentId,
    environmentRevisionId: sandbox.environmentRevisionId,
    environmentRevisionNumber: revisionNumber,
    imageId: sandbox.imageId,
    target: { provider: sandbox.provider },
    durability: sandbox.spec.durability,
    desiredState: sandbox.desiredStatus,
    observedState: sandbox.status,
    failureReason: sandbox.failureReason,
    generation: sandbox.generation,
    lastCheckpointId: sandbox.currentCheckpointId,
    reservation: sandbox.reservation ?? FLEET_DEFAULT_RESERVATION,
    lastActivityAt: sandbox.lastActivityAt,
    createdAt: sandbox.createdAt,
  };
}
