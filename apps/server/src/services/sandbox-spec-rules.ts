import {
  bootstrapSecretIssues,
  containmentIssues,
  DEFAULT_SANDBOX_SPEC,
  type SandboxLifecycle,
  type SandboxSpec,
  SandcastError,
  type SpecIssue,
} from '@sandcast/core';
import type { ProviderCapabilities } from '@sandcast/provider-sdk';

/** A spec as a client sends it: any subset, the lifecycle field by field. */
export interface SpecInput {
  displayName?: string | null | undefined;
  description?: string | null | undefined;
  durability?: SandboxSpec['durability'] | undefined;
  lifecycle?: Partial<SandboxLifecycle> | undefined;
  bootstrap?: string[] | undefined;
  containment?: SandboxSpec['containment'] | undefined;
  workspacePath?: string | undefined;
  warmPool?: Partial<SandboxSpec['warmPool']> | undefined;
}

/** `input` over `base` field by field (the lifecycle too); what `input` leaves out keeps its value. */
export function mergeSpec(base: SandboxSpec, input: SpecInput | undefined): SandboxSpec {
  if (!input) return base;
  const pick = <K extends keyof SandboxSpec>(key: K): SandboxSpec[K] =>
    input[key] === undefined ? base[key] : (input[key] as SandboxSpec[K]);
  return {
    displayName: pick('displayName'),
    description: pick('description'),
    durability: pick('durability'),
    lifecycle: { ...base.lifecycle, ...stripUndefined(input.lifecycle ?? {}) },
    bootstrap: [...pick('bootstrap')],
    containment: input.containment ? { network: input.containment.network, hosts: [...input.containment.hosts] } : base.containment,
    workspacePath: pick('workspacePath'),
    warmPool: { ...base.warmPool, ...stripUndefined(input.warmPool ?? {}) },
  };
}

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The spec a new environment gets from what the client sent. */
export const specFromInput = (input: SpecInput | undefined): SandboxSpec => mergeSpec(DEFAULT_SANDBOX_SPEC, input);

/**
 * Everything the instance and the provider refuse in a spec, with `spec.…` paths. With the
 * config, egress is refused where the sandbox would have a network of its own beside the proxy
 * (`network: host` or `bridge`): the proxy would not be its only way out.
 */
export function specIssues(
  spec: SandboxSpec,
  provider: { id: string; capabilities: ProviderCapabilities },
  config?: Record<string, unknown>,
): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const offered = provider.capabilities.durabilities;
  if (spec.durability !== 'none' && !offered.includes(spec.durability)) {
    issues.push({
      path: 'spec.durability',
      message: `the ${provider.id} provider cannot honour durability ${spec.durability}; it offers: ${['none', ...offered.filter((d) => d !== 'none')].join(', ')}`,
    });
  }
  issues.push(
    ...bootstrapSecretIssues(spec.bootstrap),
    ...containmentIssues(spec.containment, { id: provider.id, egressProxy: provider.capabilities.egressProxy === true }),
  );
  const network = config?.network;
  if (spec.containment.network !== 'deny' && typeof network === 'string' && network !== 'none') {
    issues.push({
      path: 'spec.containment.network',
      message: `the config's network is "${network}", a route out beside the egress proxy; set the config's network to "none" for "${spec.containment.network}"`,
    });
  }
  return issues;
}

/** Throws `unprocessable` (422) naming every issue, the first one in the message. */
export function refuseSpecIssues(issues: SpecIssue[], what: string): void {
  const first = issues[0];
  if (!first) return;
  throw new SandcastError('unprocessable', `${what}: ${first.path}: ${first.message}`, { issues });
}
