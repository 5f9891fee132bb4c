import type { ManagedInstance } from '@sandcast/provider-sdk';

/**
 * Labels on every container Sandcast creates. Garbage collection only ever considers containers
 * with `sandcast.managed=true`; nothing without it is touched.
 */
export const LABEL = {
  managed: 'sandcast.managed',
  kind: 'sandcast.kind',
  sandbox: 'sandcast.sandbox',
  setup: 'sandcast.setup',
  environment: 'sandcast.environment',
  expiresAt: 'sandcast.expires-at',
  /** The container's disk limit in MiB, which the disk watchdog holds it to. */
  diskMb: 'sandcast.disk-mb',
  /** On captured images: the setup session the image was captured from. */
  capturedFrom: 'sandcast.captured-from',
  /**
   * On captured images: the installation that captured it. Garbage collection removes an image of
   * its own installation that no custom image references once its capture is over.
   */
  capturedBy: 'sandcast.captured-by',
  /**
   * Which Sandcast installation created the container. Garbage collection lists only its own,
   * so two installations sharing one engine never remove each other's sandboxes.
   */
  installation: 'sandcast.installation',
  /** On a fork's container: its image is the fork's commit, removed with the last fork using it. */
  forkImage: 'sandcast.fork-image',
} as const;

export type OwnerKind = ManagedInstance['ownerKind'];

export function containerLabels(owner: {
  kind: OwnerKind;
  id: string;
  environmentId: string;
  installation: string;
  expiresAt?: Date;
  diskMb?: number;
}): Record<string, string> {
  const labels: Record<string, string> = {
    [LABEL.managed]: 'true',
    [LABEL.installation]: owner.installation,
    [LABEL.kind]: owner.kind,
    [LABEL.environment]: owner.environmentId,
    [owner.kind === 'sandbox' ? LABEL.sandbox : LABEL.setup]: owner.id,
  };
  if (owner.expiresAt) labels[LABEL.expiresAt] = owner.expiresAt.toISOString();
  if (owner.diskMb !== undefined) labels[LABEL.diskMb] = String(owner.diskMb);
  return labels;
}

/**
 * Labels written on a committed image. Docker copies a container's labels into the image it
 * commits and from there into every container run from it, so the ownership labels are
 * overridden: a container an operator starts from a captured image by hand is not managed and
 * is never garbage-collected.
 */
export function imageLabels(capture: { setupSessionId: string; environmentId: string; installation: string }): Record<string, string> {
  return {
    [LABEL.managed]: 'false',
    [LABEL.kind]: 'template',
    [LABEL.sandbox]: '',
    [LABEL.setup]: '',
    [LABEL.expiresAt]: '',
    [LABEL.installation]: '',
    [LABEL.diskMb]: '',
    [LABEL.environment]: capture.environmentId,
    [LABEL.capturedFrom]: capture.setupSessionId,
    [LABEL.capturedBy]: capture.installation,
  };
}

/**
 * The comment of a captured image. Labels are inherited by every container run from an image and
 * every image committed from such a container; a comment is not. Garbage collection removes only
 * images whose comment names their own `sandcast.captured-from`, so an image an operator commits
 * from a container of a captured image is never taken for a capture.
 */
export function captureComment(setupSessionId: string): string {
  return `Sandcast capture of setup session ${setupSessionId}`;
}

/** Who a labelled container belongs to, or null when its labels do not say. */
export function ownerOf(labels: Record<string, string> | undefined): { ownerKind: OwnerKind; ownerId: string } | null {
  if (!labels) return null;
  if (labels[LABEL.managed] !== 'true') return null;
  const sandbox = labels[LABEL.sandbox];
  const setup = labels[LABEL.setup];
  if (labels[LABEL.kind] === 'setup' && setup) return { ownerKind: 'setup', ownerId: setup };
  if (sandbox) return { ownerKind: 'sandbox', ownerId: sandbox };
  if (setup) return { ownerKind: 'setup', ownerId: setup };
  return null;
}
