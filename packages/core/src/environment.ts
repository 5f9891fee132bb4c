import type { SandboxSpec } from './sandbox-spec.ts';

/** A named, instance-scoped configuration of one provider. The mutable head of its revisions. */
export interface Environment {
  id: string;
  name: string;
  provider: string;
  config: Record<string, unknown>;
  /** Durability, lifecycle, bootstrap and containment of the sandboxes it makes. */
  spec: SandboxSpec;
  /** The provider connection whose account runs its sandboxes (providers that need one), or null. */
  connectionId?: string | null | undefined;
  currentRevision: EnvironmentRevisionRef;
  createdAt: string;
  updatedAt: string;
}

export interface EnvironmentRevisionRef {
  id: string;
  number: number;
  createdAt: string;
}

/** An immutable snapshot of an environment's provider and config. Never updated. */
export interface EnvironmentRevision extends EnvironmentRevisionRef {
  environmentId: string;
  provider: string;
  config: Record<string, unknown>;
  spec: SandboxSpec;
}

/** Environment names: what an operator types on a command line. */
export const ENVIRONMENT_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;
