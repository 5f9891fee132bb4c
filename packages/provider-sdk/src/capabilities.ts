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
  /**
   * `execStream` takes `stdinStream`: a long-lived command reads a stream from the host while its
   * output streams back (the host bridge's `duplex_v1` channel runs over it).
   */
  duplexCommandStream: boolean;
  /** Sandcast can checkpoint the provider's workspaces (over `workspaceHostPath` or `exportWorkspace`/`importWorkspace`) and recover them on new compute. */
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
   * `networkNamespace` names the sandbox's own network namespace on this host, so the server can
   * put its egress proxy on the sandbox's loopback (`containment.network` `allowlist` or `allow`).
   * Absent means false: such environments are refused when saved.
   */
  egressProxy?: boolean | undefined;
  /**
   * `fork` makes new sandboxes whose filesystem is a running sandbox's at that moment (its
   * processes are not copied). Absent means false.
   */
  fork?: boolean | undefined;
  /**
   * A sandbox is a Linux machine of its own where Sandcast may install and run its static bridge
   * gateway: the paths in its commands are the sandbox's, not the host's. Absent means false:
   * sessions there run without a host bridge.
   */
  bridgeGateway?: boolean | undefined;
}

/**
 * The capabilities of a provider whose sandboxes run on the Sandcast host itself (the `local` and
 * `docker` providers): a native PTY, interactive setup over it, capture into an image with change
 * tracking and deletion; port forwarding into the sandbox's network namespace and the egress proxy on its loopback;
 * a command stream with stdin (the duplex bridge); fork; checkpoints of the workspace (Sandcast's own, over the
 * workspace's host directory or a tar stream), so durability `checkpointed`. One source, so that the
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
  duplexCommandStream: true,
  checkpoint: true,
  portForward: true,
  stopStart: true,
  durabilities: Object.freeze(['none', 'checkpointed']) as Durability[],
  egressProxy: true,
  fork: true,
  bridgeGateway: true,
});
