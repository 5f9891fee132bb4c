import {
  bootstrapSecretIssues,
  canonicalJson,
  containmentIssues,
  DEFAULT_SANDBOX_SPEC,
  type SandboxLifecycle,
  type SandboxSpec,
  SandcastError,
} from '@sandcast/core';

/** A spec as a client sends it: any subset; the lifecycle field by field. */
export type SandboxSpecPatch = Partial<Omit<SandboxSpec, 'lifecycle'>> & { lifecycle?: Partial<SandboxLifecycle> | undefined };

/**
 * `patch` over `current` (the defaults for a new environment), checked against what the instance
 * accepts today. Returns null when nothing changes, so an identical save makes no revision.
 */
export function mergeSpec(current: SandboxSpec, patch: SandboxSpecPatch | undefined): SandboxSpec | null {
  if (!patch) return null;
  const next: SandboxSpec = {
    displayName: patch.displayName !== undefined ? patch.displayName : current.displayName,
    description: patch.description !== undefined ? patch.description : current.description,
    durability: patch.durability ?? current.durability,
    lifecycle: { ...current.lifecycle, ...patch.lifecycle },
    bootstrap: patch.bootstrap ?? current.bootstrap,
    containment: patch.containment ?? current.containment,
  };
  const issues = [...bootstrapSecretIssues(next.bootstrap), ...containmentIssues(next.containment)];
  if (issues.length > 0) {
    throw new SandcastError('validation_failed', `the sandbox spec is refused: ${issues[0]!.path}: ${issues[0]!.message}`, { issues });
  }
  return canonicalJson(next) === canonicalJson(current) ? null : next;
}

export const newEnvironmentSpec = (patch: SandboxSpecPatch | undefined): SandboxSpec =>
  mergeSpec(DEFAULT_SANDBOX_SPEC, patch) ?? DEFAULT_SANDBOX_SPEC;
