import { scanTextForSecrets } from './secret-content-scan.ts';

/**
 * What an environment says about the sandboxes it makes, beside the provider config: how durable
 * they are, when they go idle, what runs on every (re)boot, and what they may reach. Part of every
 * revision: changing any of it makes a new one. None of it changes what a custom image was built
 * from, so an edit of the spec alone keeps the active image linked.
 */
export const DURABILITIES = ['none', 'provider_snapshot', 'checkpointed'] as const;
export type Durability = (typeof DURABILITIES)[number];

export const IDLE_ACTIONS = ['stop', 'keep_running', 'checkpoint_and_stop'] as const;
export type IdleAction = (typeof IDLE_ACTIONS)[number];

export const NETWORK_CONTAINMENTS = ['deny', 'allowlist', 'allow'] as const;
export type NetworkContainment = (typeof NETWORK_CONTAINMENTS)[number];

export interface SandboxLifecycle {
  /** Seconds without an operation through Sandcast after which `idleAction` applies. Default 180. */
  idleAfterSeconds: number;
  /** Default `stop`. */
  idleAction: IdleAction;
}

export interface SandboxContainment {
  /** `deny` (default): no route out. `allowlist`: only `hosts`. `allow`: any public host. Egress always leaves through the host-side proxy. */
  network: NetworkContainment;
  hosts: string[];
}

export interface WarmPool {
  /** Sandboxes kept booted from the active image, ready to be claimed. 0 (default) = no pool. */
  size: number;
  /** A pooled sandbox older than this is drained and replaced. Default 3600. */
  maxAgeSeconds: number;
}

export interface SandboxSpec {
  displayName: string | null;
  description: string | null;
  /** Declared, never assumed: a provider that cannot honour it is refused. Default `none`. */
  durability: Durability;
  lifecycle: SandboxLifecycle;
  /** Shell commands run in order on create and on every replacement of the compute. */
  bootstrap: string[];
  containment: SandboxContainment;
  /** The directory checkpoints cover (durability `checkpointed`). Absolute. Default `/workspace`. */
  workspacePath: string;
  /** A runtime knob: changing it makes a revision but never detaches the image. */
  warmPool: WarmPool;
}

export const SANDBOX_SPEC_LIMITS = {
  bootstrapCommands: 32,
  bootstrapCommandBytes: 4096,
  displayNameChars: 100,
  descriptionChars: 2000,
  idleAfterSecondsMin: 10,
  idleAfterSecondsMax: 7 * 24 * 3600,
  allowlistHosts: 64,
  workspacePathChars: 1024,
  warmPoolSizeMax: 32,
  warmPoolMaxAgeSecondsMin: 60,
  warmPoolMaxAgeSecondsMax: 7 * 24 * 3600,
} as const;

export const DEFAULT_SANDBOX_SPEC: SandboxSpec = {
  displayName: null,
  description: null,
  durability: 'none',
  lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' },
  bootstrap: [],
  containment: { network: 'deny', hosts: [] },
  workspacePath: '/workspace',
  warmPool: { size: 0, maxAgeSeconds: 3600 },
};

export interface SpecIssue {
  path: string;
  message: string;
}

/**
 * What the content rules say about a spec's bootstrap commands: credentials do not belong there
 * (they would sit in every revision and every activity record), they belong in secret config fields.
 */
export function bootstrapSecretIssues(bootstrap: readonly string[]): SpecIssue[] {
  const issues: SpecIssue[] = [];
  for (const [index, command] of bootstrap.entries()) {
    const finding = scanTextForSecrets(`bootstrap[${index}]`, command, { shellScript: true })[0];
    if (finding) {
      issues.push({
        path: `spec.bootstrap.${index}`,
        message: `looks like it holds a credential (${finding.reason}); bootstrap commands are stored in every revision — put the credential in a secret config field or a connection and read it from there`,
      });
    }
  }
  return issues;
}

/**
 * Checks network containment against what the provider can enforce: anything beyond `deny` needs
 * the egress proxy on the sandbox's loopback (a provider with the `egressProxy` capability), and
 * an allowlist names at least one host.
 */
export function containmentIssues(containment: SandboxContainment, provider: { id: string; egressProxy: boolean }): SpecIssue[] {
  if (containment.network === 'deny') return [];
  if (!provider.egressProxy) {
    return [
      {
        path: 'spec.containment.network',
        message: `the ${provider.id} provider cannot put the egress proxy inside its sandboxes, so "${containment.network}" cannot be enforced there; use "deny" or an on-host provider (local, docker)`,
      },
    ];
  }
  if (containment.network === 'allowlist' && containment.hosts.length === 0) {
    return [
      {
        path: 'spec.containment.hosts',
        message: 'an allowlist needs at least one host (example.com or *.example.com); use "deny" for no route out',
      },
    ];
  }
  return [];
}

/** A stored spec with every field it lacks set to its default (rows written before a field existed). */
export function withSpecDefaults(stored: Partial<Record<keyof SandboxSpec, unknown>>): SandboxSpec {
  const lifecycle = (stored.lifecycle ?? {}) as Partial<SandboxLifecycle>;
  const containment = (stored.containment ?? {}) as Partial<SandboxContainment>;
  return {
    displayName: (stored.displayName as string | null | undefined) ?? null,
    description: (stored.description as string | null | undefined) ?? null,
    durability: (stored.durability as Durability | undefined) ?? DEFAULT_SANDBOX_SPEC.durability,
    lifecycle: { ...DEFAULT_SANDBOX_SPEC.lifecycle, ...lifecycle },
    bootstrap: (stored.bootstrap as string[] | undefined) ?? [],
    containment: { ...DEFAULT_SANDBOX_SPEC.containment, ...containment },
    workspacePath: (stored.workspacePath as string | undefined) ?? DEFAULT_SANDBOX_SPEC.workspacePath,
    warmPool: { ...DEFAULT_SANDBOX_SPEC.warmPool, ...((stored.warmPool ?? {}) as Partial<WarmPool>) },
  };
}
