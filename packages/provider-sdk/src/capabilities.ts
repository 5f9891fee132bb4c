import type { Durability } from '@sandcast/core';

/** How a captured custom image is stored by a provider. */
export const TEMPLATE_KINDS = ['snapshot', 'image', 'provider_template'] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** How an operator reaches an interactive setup sandbox. */
export const SETUP_CONNECTION_TYPES = ['pty', 'ssh'] as const;
export type SetupConnectionType = (typeof SETUP_CONNECTION_TYPES)[number];

/**
 * What a provider can do beyond the core lifecycle. Optional operations of the contract are
 * called only when their flag is true; the conformance suite checks the flags are honest.
 */
export interface ProviderCapabilities {
  /** `openPty` works on sandboxes and setup sandboxes. */
  pty: boolean;
  /** `startInteractiveSetup` / `getInteractiveSetup` / `cancelInteractiveSetup` work. */
  interactiveSetup: boolean;
  /** How the operator connects to a setup sandbox. */
  interactiveSetupConnectionTypes: SetupConnectionType[];
  /** `captureTemplate` works. */
  templateCapture: boolean;
  /** What `captureTemplate` produces; null when capture is not offered. */
  templateRefKind: TemplateKind | null;
  /** `deleteTemplate` removes the provider artefact. */
  templateDelete: boolean;
  /** `listChanges` reports what a setup sandbox changed. */
  changeTracking: boolean;
  /** `openDuplexChannel` gives a raw byte stream into the sandbox. */
  duplexCommandStream: boolean;
  /** The provider can checkpoint workspaces natively. */
  checkpoint: boolean;
  /** `openPortStream` reaches a TCP port on the sandbox's own loopback (its ports served as URLs). */
  portForward: boolean;
  /** `stop` and `start` work: a stopped sandbox keeps its disk and starts again on the same instance id. */
  stopStart: boolean;
  /**
   * The durabilities an environment on this provider may declare (`none` always). A declared one
   * the provider cannot honour is refused when the environment is saved, never assumed.
   */
  durabilities: Durability[];
  /**
   * Short-lived sandboxes (an environment probe) are archived with `archive` rather than
   * destroyed: the vendor keeps them cheaply and removes them on its own schedule (Daytona's
   * auto-delete). Absent means false.
   */
  archiveInsteadOfDelete?: boolean | undefined;
  /**
   * `fork` makes new sandboxes whose filesystem is a running sandbox's at that moment (its
   * processes are not copied). Absent means false.
   */
  fork?: boolean | undefined;
}

/**
 * The capabilities of a provider whose sandboxes run on the Sandcast host itself (the `local` and
 * `docker` providers): a native PTY, interactive setup over it, capture into an image with change
 * tracking and deletion; port forwarding into the sandbox's network namespace; fork; no duplex stream and no native checkpoint yet. One source, so that the
 * two cannot drift apart by accident; a provider that differs spreads it and overrides the flag.
 */
export const ON_HOST_PROVIDER_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze({
  pty: true,
  interactiveSetup: true,
  interactiveSetupConnectionTypes: Object.freeze(['pty']) as SetupConnectionType[],
  templateCapture: true,
  templateRefKind: 'image',
  templateDelete: true,
  changeTracking: true,
  duplexCommandStream: false,
  checkpoint: false,
  portForward: true,
  stopStart: true,
  durabilities: Object.freeze(['none']) as Durability[],
  fork: true,
});
