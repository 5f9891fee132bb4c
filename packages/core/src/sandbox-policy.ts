import { SandcastError } from './errors.ts';
import type { Durability, SandboxLifecycle } from './sandbox-spec.ts';

/**
 * An agent's sandbox policy: names bound to exact environment revisions, and how much a session
 * may choose.
 *
 * - `fixed`: one binding; a session may not override it, not even with an identical choice.
 * - `selectable`: a session may pick a binding by name (`{use}`); none picked → the default.
 * - `configurable`: also a one-off spec over a binding, limited to what the instance allows.
 * - `none`: the agent has no primary sandbox; any sandbox input is refused.
 */
export const SANDBOX_POLICY_MODES = ['fixed', 'selectable', 'configurable', 'none'] as const;
export type SandboxPolicyMode = (typeof SANDBOX_POLICY_MODES)[number];

/** Binding names: what a session's `{use}` says. */
export const BINDING_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}$/;
export const MAX_BINDINGS = 16;

export interface SandboxBinding {
  /** An exact revision; "use latest" is a client convenience that writes the id. */
  environmentRevisionId: string;
  /** Overrides the revision's durability for sessions of this binding. */
  durability?: Durability | undefined;
}

export interface SandboxPolicy {
  mode: SandboxPolicyMode;
  /** The binding a session gets when it names none; null only for mode `none`. */
  default: string | null;
  bindings: Record<string, SandboxBinding>;
}

/** A one-off spec over a binding (mode `configurable` only). */
export interface InlineSandboxSpec {
  /** The binding it starts from; default the policy's default. */
  use?: string | undefined;
  /** Top-level provider config fields to override, each one the instance allows. */
  config?: Record<string, unknown> | undefined;
  lifecycle?: Partial<SandboxLifecycle> | undefined;
  bootstrap?: string[] | undefined;
}

/** What a session start may say about its sandbox. */
export type SessionSandboxRequest = { use: string } | { inline: InlineSandboxSpec } | undefined;

export type PolicyResolution =
  | { kind: 'none' }
  | { kind: 'binding'; name: string; binding: SandboxBinding }
  | { kind: 'inline'; name: string; binding: SandboxBinding; inline: InlineSandboxSpec };

export interface PolicyIssue {
  path: string;
  message: string;
}

/** Checks a policy as an agent version would store it. */
export function sandboxPolicyIssues(policy: SandboxPolicy): PolicyIssue[] {
  const names = Object.keys(policy.bindings);
  const issues: PolicyIssue[] = [];
  for (const name of names) {
    if (!BINDING_NAME_PATTERN.test(name)) {
      issues.push({
        path: `sandboxPolicy.bindings.${name}`,
        message: 'binding names are 1-40 lowercase letters, digits, "_" or "-", starting with a letter or digit',
      });
    }
  }
  if (policy.mode === 'none') {
    if (names.length > 0)
      issues.push({ path: 'sandboxPolicy.bindings', message: 'mode "none" has no primary sandbox: leave bindings empty' });
    if (policy.default !== null) issues.push({ path: 'sandboxPolicy.default', message: 'mode "none" has no default binding' });
    return issues;
  }
  if (names.length < 1 || names.length > MAX_BINDINGS) {
    issues.push({ path: 'sandboxPolicy.bindings', message: `declare 1 to ${MAX_BINDINGS} bindings (there are ${names.length})` });
  }
  if (policy.mode === 'fixed' && names.length > 1) {
    issues.push({ path: 'sandboxPolicy.bindings', message: 'mode "fixed" binds exactly one sandbox; use "selectable" to offer several' });
  }
  if (policy.default === null || !Object.hasOwn(policy.bindings, policy.default)) {
    issues.push({
      path: 'sandboxPolicy.default',
      message: names.length > 0 ? `name one of the bindings (${names.join(', ')})` : 'name one of the bindings',
    });
  }
  return issues;
}

const refuse = (message: string, reason: string) => new SandcastError('unprocessable', message, { reason });

function binding(policy: SandboxPolicy, name: string): SandboxBinding {
  const found = Object.hasOwn(policy.bindings, name) ? policy.bindings[name] : undefined;
  if (!found) {
    throw refuse(
      `this agent has no sandbox binding named "${name}"; it offers ${Object.keys(policy.bindings).join(', ')}`,
      'unknown_binding',
    );
  }
  return found;
}

/**
 * Resolves what a session start asked for against the agent's policy, once. Throws an
 * `unprocessable` SandcastError (422) naming why the request is refused.
 */
export function resolveSandboxPolicy(policy: SandboxPolicy, request: SessionSandboxRequest): PolicyResolution {
  switch (policy.mode) {
    case 'none':
      if (request !== undefined) throw refuse('this agent has no sandbox; start the session without sandbox input', 'no_sandbox');
      return { kind: 'none' };
    case 'fixed': {
      if (request !== undefined) throw refuse('this agent has a fixed sandbox; session overrides are not allowed', 'fixed_policy');
      const name = policy.default ?? Object.keys(policy.bindings)[0]!;
      return { kind: 'binding', name, binding: binding(policy, name) };
    }
    case 'selectable':
    case 'configurable': {
      if (request === undefined) return { kind: 'binding', name: policy.default!, binding: binding(policy, policy.default!) };
      if ('use' in request) return { kind: 'binding', name: request.use, binding: binding(policy, request.use) };
      if (policy.mode === 'selectable') {
        throw refuse(
          'this agent\'s sandbox is selectable: pick one of its bindings with {"use": NAME}; one-off specs need a configurable policy',
          'inline_not_allowed',
        );
      }
      const name = request.inline.use ?? policy.default!;
      return { kind: 'inline', name, binding: binding(policy, name), inline: request.inline };
    }
    default: {
      const never: never = policy.mode;
      return never;
    }
  }
}

/** What the instance lets a one-off spec change (the `sessions` instance settings). */
export interface InlineAllowance {
  providers: readonly string[];
  configFields: readonly string[];
}

/** Checks a one-off spec over a binding whose environment uses `provider`. */
export function inlineSpecIssues(inline: InlineSandboxSpec, provider: string, allowance: InlineAllowance): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  if (!allowance.providers.includes(provider)) {
    issues.push({
      path: 'sandbox.inline',
      message: `one-off specs are not allowed for the ${provider} provider on this instance (allowed: ${allowance.providers.join(', ') || 'none'}); an admin sets sessions.inlineProviders`,
    });
  }
  for (const field of Object.keys(inline.config ?? {})) {
    if (!allowance.configFields.includes(field)) {
      issues.push({
        path: `sandbox.inline.config.${field}`,
        message: `this instance does not let a session change "${field}" (allowed: ${allowance.configFields.join(', ') || 'none'})`,
      });
    }
  }
  return issues;
}
