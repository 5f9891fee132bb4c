import type { SandboxPolicy } from './sandbox-policy.ts';

/** Capabilities an agent opts into. `sandbox_fleet`: resource sandboxes beside the primary one. */
export const AGENT_CAPABILITIES = ['sandbox_fleet'] as const;
export type AgentCapability = (typeof AGENT_CAPABILITIES)[number];

/** Agent names: what an operator types on a command line. */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export interface AgentVersionRef {
  id: string;
  number: number;
  createdAt: string;
}

/** An immutable version of an agent's policy and capabilities. Never updated. */
export interface AgentVersion extends AgentVersionRef {
  agentId: string;
  sandboxPolicy: SandboxPolicy;
  capabilities: AgentCapability[];
}

/** A named consumer of sandboxes. The mutable head of its versions; archived, never erased. */
export interface Agent {
  id: string;
  name: string;
  displayName: string | null;
  description: string | null;
  currentVersion: AgentVersion;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export const SESSION_STATUSES = ['active', 'ended'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** One agent run. What it resolved at start is pinned into its primary sandbox and never changes. */
export interface Session {
  id: string;
  agentId: string;
  agentVersionId: string;
  status: SessionStatus;
  /** Null for an agent whose policy is `none`. */
  primarySandboxId: string | null;
  /** The binding it resolved to, `inline` for a one-off spec, null without a sandbox. */
  bindingName: string | null;
  createdByRole: string;
  createdByKeyId: string | null;
  createdAt: string;
  endedAt: string | null;
}
