import type { SandcastClient } from '@sandcast/client';
import { type AgentVersionBody, type SandboxPolicyBody, SandboxPolicySchema } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import { collect, UsageError } from '../../format.ts';
import { DURABILITY_CHOICES } from '../env/spec-options.ts';

const MODE_CHOICES = SandboxPolicySchema.shape.mode.options;
type Policy = AgentVersionBody['sandboxPolicy'];
type Durability = (typeof DURABILITY_CHOICES)[number];

export interface AgentOptions {
  displayName?: string;
  description?: string;
  fleet?: boolean;
  mode?: string;
  bind?: string[];
  unbind?: string[];
  default?: string;
  durabilityOf?: string[];
}

/** The flags `agent create` and `agent update` share; an update can also unbind and turn the fleet off. */
export function addAgentOptions(command: Command, options: { update: boolean }): Command {
  const mode = new Option(
    '--mode <mode>',
    'fixed: one sandbox, no overrides; selectable: a session picks a binding; configurable: also one-off settings; none: no sandbox',
  ).choices(MODE_CHOICES);
  command
    .addOption(options.update ? mode : mode.makeOptionMandatory())
    .addOption(
      new Option(
        '--bind <NAME=ENV[@REVISION]>',
        'bind a name to an environment (name or id) at a revision (number or rev_ id; default its current one) (repeatable)',
      ).argParser(collect),
    );
  if (options.update) command.addOption(new Option('--unbind <NAME>', 'remove a binding (repeatable)').argParser(collect));
  command
    .addOption(new Option('--default <binding>', 'the binding a session gets when it names none'))
    .addOption(
      new Option(
        '--durability-of <NAME=DURABILITY>',
        `override a binding's durability (${DURABILITY_CHOICES.join(', ')}; "inherit" drops the override) (repeatable)`,
      ).argParser(collect),
    )
    .addOption(new Option('--fleet', 'let its sessions create resource sandboxes beside the primary one'));
  if (options.update) command.addOption(new Option('--no-fleet', 'no resource sandboxes'));
  return command
    .addOption(new Option('--display-name <text>', 'a human name ("" clears it)'))
    .addOption(new Option('--description <text>', 'what the agent is for ("" clears it)'));
}

export interface BindingRequest {
  name: string;
  environment: string;
  /** A revision number or a `rev_` id; undefined for the environment's current revision. */
  revision?: number | string | undefined;
}

/** `build=dev`, `build=dev@3`, `build=env_1@rev_2` → its parts. */
export function parseBind(raw: string): BindingRequest {
  const eq = raw.indexOf('=');
  const name = raw.slice(0, eq);
  const target = raw.slice(eq + 1);
  const at = target.lastIndexOf('@');
  const environment = at < 0 ? target : target.slice(0, at);
  const revision = at < 0 ? undefined : target.slice(at + 1);
  if (eq <= 0 || environment === '' || revision === '')
    throw new UsageError(`--bind takes NAME=ENV or NAME=ENV@REVISION (a number or a rev_ id), got "${raw}"`);
  if (revision === undefined) return { name, environment };
  return { name, environment, revision: /^\d+$/.test(revision) ? Number(revision) : revision };
}

/** `build=checkpointed` → the binding and its durability; `inherit` → null (no override). */
export function parseDurabilityOf(raw: string): { name: string; durability: Durability | null } {
  const eq = raw.indexOf('=');
  const value = raw.slice(eq + 1);
  if (eq <= 0 || (value !== 'inherit' && !(DURABILITY_CHOICES as readonly string[]).includes(value))) {
    throw new UsageError(`--durability-of takes NAME=${DURABILITY_CHOICES.join('|')}|inherit, got "${raw}"`);
  }
  return { name: raw.slice(0, eq), durability: value === 'inherit' ? null : (value as Durability) };
}

/** Looks the --bind environments and revisions up: "use latest" becomes the exact current revision id. */
export async function resolveBindings(client: SandcastClient, requests: BindingRequest[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const request of requests) {
    if (out.has(request.name)) throw new UsageError(`--bind names "${request.name}" twice`);
    const environment = await client.environments.resolve(request.environment);
    if (request.revision === undefined) {
      out.set(request.name, environment.currentRevision.id);
      continue;
    }
    const revisions = await client.environments.revisions(environment.id);
    const found = revisions.find((r) => (typeof request.revision === 'number' ? r.number === request.revision : r.id === request.revision));
    if (!found) {
      throw new UsageError(
        `environment ${environment.name} has no revision ${request.revision} (it has ${revisions.map((r) => r.number).join(', ')}; \`sandcast env revisions ${environment.name}\` lists them)`,
      );
    }
    out.set(request.name, found.id);
  }
  return out;
}

export interface PolicyChanges {
  mode?: Policy['mode'] | undefined;
  bindings: Map<string, string>;
  unbind: string[];
  default?: string | undefined;
  durabilityOf: Array<{ name: string; durability: Durability | null }>;
}

/** Whether any policy flag was given. */
export function hasPolicyChanges(changes: PolicyChanges): boolean {
  return (
    changes.mode !== undefined ||
    changes.bindings.size > 0 ||
    changes.unbind.length > 0 ||
    changes.default !== undefined ||
    changes.durabilityOf.length > 0
  );
}

/**
 * The policy the flags describe over `current` (an update) or nothing (a create). A re-bound name
 * keeps its durability override; mode `none` drops every binding; the default is kept while it
 * is still bound, else it is the only binding when there is exactly one.
 */
export function applyPolicyChanges(current: Policy | undefined, changes: PolicyChanges): SandboxPolicyBody {
  const mode = changes.mode ?? current?.mode;
  if (mode === undefined) throw new UsageError('pass --mode fixed, selectable, configurable or none');
  const bindings: Policy['bindings'] = structuredClone(current?.bindings ?? {});
  for (const name of changes.unbind) {
    if (!Object.hasOwn(bindings, name)) throw new UsageError(`--unbind ${name}: there is no binding named "${name}"`);
    delete bindings[name];
  }
  for (const [name, environmentRevisionId] of changes.bindings) bindings[name] = { ...bindings[name], environmentRevisionId };
  for (const { name, durability } of changes.durabilityOf) {
    const binding = Object.hasOwn(bindings, name) ? bindings[name] : undefined;
    if (!binding) throw new UsageError(`--durability-of ${name}: there is no binding named "${name}"; add it with --bind ${name}=ENV`);
    if (durability === null) delete binding.durability;
    else binding.durability = durability;
  }
  if (mode === 'none') {
    if (changes.bindings.size > 0 || changes.default !== undefined)
      throw new UsageError('--mode none has no sandbox: leave out --bind and --default');
    return { mode, default: null, bindings: {} };
  }
  const names = Object.keys(bindings);
  if (names.length === 0) throw new UsageError(`--mode ${mode} needs a sandbox: add one with --bind NAME=ENV`);
  let fallback: string | null = null;
  if (current?.default && names.includes(current.default)) fallback = current.default;
  else if (names.length === 1) fallback = names[0]!;
  const chosen = changes.default ?? fallback;
  if (chosen === null) throw new UsageError(`name the default binding with --default (one of ${names.join(', ')})`);
  return { mode, default: chosen, bindings };
}

/** Whether two policies say the same thing (an update that would not change it sends none). */
export function samePolicy(a: Policy, b: SandboxPolicyBody): boolean {
  const canonical = (p: { mode: string; default?: string | null | undefined; bindings?: Policy['bindings'] | undefined }) =>
    JSON.stringify([
      p.mode,
      p.default ?? null,
      Object.entries(p.bindings ?? {})
        .map(([name, binding]) => [name, binding.environmentRevisionId, binding.durability ?? null])
        .sort(),
    ]);
  return canonical(a) === canonical(b);
}

/** Reads the policy flags into changes, looking environments up. */
export async function policyChangesFrom(client: SandcastClient, options: AgentOptions): Promise<PolicyChanges> {
  return {
    mode: options.mode as Policy['mode'] | undefined,
    bindings: await resolveBindings(client, (options.bind ?? []).map(parseBind)),
    unbind: options.unbind ?? [],
    default: options.default,
    durabilityOf: (options.durabilityOf ?? []).map(parseDurabilityOf),
  };
}
