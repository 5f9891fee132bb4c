import type { CustomImageKind, CustomImageStatus } from './custom-image.machine.ts';
import type { BootSource } from './fingerprint.ts';
import type { SandboxDesiredStatus, SandboxStatus } from './sandbox.machine.ts';
import type { SandboxSpec } from './sandbox-spec.ts';
import type { SetupSessionStatus } from './setup-session.machine.ts';

/** A captured custom image ("template") of one environment, with its provenance. */
export interface CustomImageTemplate {
  id: string;
  environmentId: string;
  provider: string;
  kind: CustomImageKind;
  /** The provider's stable reference; null only for a failed capture. */
  providerRef: string | null;
  digest: string | null;
  sizeBytes: number | null;
  status: CustomImageStatus;
  /** The image the setup was seeded from (a Refresh); null when it started from the base. */
  refreshedFromTemplateId: string | null;
  setupSessionId: string | null;
  /** The environment revision and boot-source fingerprint it was captured from. Never change. */
  capturedRevisionId: string;
  capturedFingerprint: string;
  /** The revision it is currently linked to: runs use it while the config's fingerprint matches. */
  linkedRevisionId: string;
  linkedFingerprint: string;
  linkedBootSource: BootSource;
  metadata: Record<string, unknown>;
  failureReason: string | null;
  capturedAt: string;
  lastUsedAt: string | null;
  supersededByTemplateId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A time-limited setup sandbox an operator prepares an image in. */
export interface SetupSession {
  id: string;
  environmentId: string;
  environmentRevisionId: string;
  provider: string;
  status: SetupSessionStatus;
  sourceTemplateId: string | null;
  providerLeaseId: string | null;
  /** How to connect, with every credential removed. The secret payload is never stored. */
  connectionSummary: Record<string, unknown>;
  expiresAt: string;
  finishedAt: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a resource sandbox reserves against its session's fleet limits. */
export interface FleetReservation {
  cpu: number;
  memoryMb: number;
}
/**
 * How a sandbox came to be: booted for the request (`cold`), handed out of its environment's warm
 * pool (`warm_pool`), or made by forking another sandbox (`fork`).
 */
export const SANDBOX_SOURCES = ['cold', 'warm_pool', 'fork'] as const;
export type SandboxSource = (typeof SANDBOX_SOURCES)[number];

/** The durable sandbox resource; its compute (provider instance) may come and go. */
export interface Sandbox {
  id: string;
  environmentId: string | null;
  environmentRevisionId: string;
  /** The custom image it booted from; null for the base config. */
  imageId: string | null;
  provider: string;
  providerInstanceId: string | null;
  desiredStatus: SandboxDesiredStatus;
  status: SandboxStatus;
  failureReason: string | null;
  /** The session it belongs to (its primary or one of its resource sandboxes); null for a sandbox created directly. */
  sessionId: string | null;
  /** The policy binding it was resolved from (`inline` for a one-off spec); null outside sessions. */
  bindingName: string | null;
  /** A resource sandbox's session-scoped id (`rsb_…`); null for a primary or plain sandbox. */
  logicalId: string | null;
  /** What a resource sandbox reserves against its session's fleet limits; null otherwise. */
  reservation: FleetReservation | null;
  /** The spec pinned at creation (the revision's, with the binding's and a one-off spec's overrides). */
  spec: SandboxSpec;
  /** Top-level provider config fields a one-off spec overrode, applied over the revision's config. */
  configOverrides: Record<string, unknown>;
  /** Goes up whenever the compute is replaced; writes fenced on it ignore older compute. */
  generation: number;
  /** The last attached checkpoint (durability `checkpointed`): what a recovery restores. */
  currentCheckpointId: string | null;
  /** The last operation through Sandcast; the idle policy counts from it. */
  lastActivityAt: string;
  createdByRole: string;
  createdByKeyId: string | null;
  /** How it came to be; a pool member says `warm_pool` from the claim on. */
  source: SandboxSource;
  /** True while it waits in its environment's warm pool: nobody's yet, not listed as a user sandbox. */
  pooled: boolean;
  /** The sandbox it was forked from (`source: fork`), else null. */
  forkedFromId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A session whose setup sandbox is up and waiting for the operator: commands, terminals and SSH reach it. */
export type RunningSetupSession = SetupSession & { status: 'waiting_for_user'; providerLeaseId: string };

export function isRunningSetup(session: SetupSession | null | undefined): session is RunningSetupSession {
  return session?.status === 'waiting_for_user' && typeof session.providerLeaseId === 'string' && session.providerLeaseId !== '';
}
