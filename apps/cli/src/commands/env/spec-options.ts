import { type EnvironmentBody, type SandboxSpecInput, SandboxSpecSchema } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import { clearable, collect, UsageError } from '../../format.ts';

/** The durabilities and idle actions the server accepts, from the shared schema. */
export const DURABILITY_CHOICES = SandboxSpecSchema.shape.durability.options;
const IDLE_ACTION_CHOICES = SandboxSpecSchema.shape.lifecycle.shape.idleAction.options;
const NETWORK_CHOICES = SandboxSpecSchema.shape.containment.shape.network.options;

export interface SpecOptions {
  displayName?: string;
  description?: string;
  durability?: string;
  bootstrap?: string[];
  bootstrapClear?: boolean;
  idleAfter?: string;
  idleAction?: string;
  network?: string;
  allowHost?: string[];
  allowHostsClear?: boolean;
  warmPoolSize?: string;
  warmPoolMaxAge?: string;
}

/** The spec flags `env create` and `env update` share. */
export function addSpecOptions(command: Command): Command {
  return command
    .addOption(new Option('--display-name <text>', 'a human name for its sandboxes ("" clears it)'))
    .addOption(new Option('--description <text>', 'what its sandboxes are for ("" clears it)'))
    .addOption(new Option('--durability <kind>', 'what survives a loss of the compute').choices(DURABILITY_CHOICES))
    .addOption(
      new Option(
        '--bootstrap <command>',
        'a shell command run on create and on every replacement of the compute (repeatable; adds to the list)',
      ).argParser(collect),
    )
    .addOption(new Option('--bootstrap-clear', 'start from an empty bootstrap list (then add with --bootstrap)'))
    .addOption(new Option('--idle-after <seconds>', 'seconds without activity after which --idle-action applies'))
    .addOption(new Option('--idle-action <action>', 'what happens to an idle sandbox').choices(IDLE_ACTION_CHOICES))
    .addOption(
      new Option('--network <policy>', 'egress: deny (no route out), allowlist (only --allow-host hosts), allow (any public host)').choices(
        NETWORK_CHOICES,
      ),
    )
    .addOption(
      new Option(
        '--allow-host <host>',
        'a host the allowlist lets sandboxes reach: example.com, or *.example.com for the names below it (repeatable; adds to the list; implies --network allowlist)',
      ).argParser(collect),
    )
    .addOption(new Option('--allow-hosts-clear', 'start from an empty allowlist (then add with --allow-host)'))
    .addOption(new Option('--warm-pool-size <n>', 'sandboxes kept booted ahead, ready to hand out (0-32; 0 = no pool)'))
    .addOption(new Option('--warm-pool-max-age <seconds>', 'a pooled sandbox older than this is replaced (60-604800)'));
}

/** A whole number of seconds from a flag, or a usage error naming it. */
export function parseSeconds(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} takes a whole number of seconds, got "${raw}"`);
  return Number(raw);
}

/**
 * The spec fields the flags change, over `current` (an update) or the defaults (a create);
 * undefined when no spec flag was given. Bootstrap commands are added to the current list;
 * --bootstrap-clear empties it first.
 */
export function specFrom(options: SpecOptions, current?: EnvironmentBody['spec']): SandboxSpecInput | undefined {
  const spec: SandboxSpecInput = {};
  if (options.displayName !== undefined) spec.displayName = clearable(options.displayName);
  if (options.description !== undefined) spec.description = clearable(options.description);
  if (options.durability !== undefined) spec.durability = options.durability as NonNullable<SandboxSpecInput['durability']>;
  if (options.bootstrapClear || options.bootstrap?.length) {
    spec.bootstrap = [...(options.bootstrapClear ? [] : (current?.bootstrap ?? [])), ...(options.bootstrap ?? [])];
  }
  if (options.warmPoolSize !== undefined || options.warmPoolMaxAge !== undefined) {
    spec.warmPool = {};
    if (options.warmPoolSize !== undefined) {
      if (!/^\d+$/.test(options.warmPoolSize)) throw new UsageError(`--warm-pool-size takes a whole number, got "${options.warmPoolSize}"`);
      spec.warmPool.size = Number(options.warmPoolSize);
    }
    if (options.warmPoolMaxAge !== undefined) spec.warmPool.maxAgeSeconds = parseSeconds('--warm-pool-max-age', options.warmPoolMaxAge);
  }
  if (options.idleAfter !== undefined || options.idleAction !== undefined) {
    spec.lifecycle = {};
    if (options.idleAfter !== undefined) spec.lifecycle.idleAfterSeconds = parseSeconds('--idle-after', options.idleAfter);
    if (options.idleAction !== undefined)
      spec.lifecycle.idleAction = options.idleAction as NonNullable<NonNullable<SandboxSpecInput['lifecycle']>['idleAction']>;
  }
  if (options.network !== undefined || options.allowHost?.length || options.allowHostsClear) {
    const hosts = [...(options.allowHostsClear ? [] : (current?.containment.hosts ?? [])), ...(options.allowHost ?? [])];
    const network = (options.network ??
      (options.allowHost?.length ? 'allowlist' : (current?.containment.network ?? 'deny'))) as NonNullable<
      SandboxSpecInput['containment']
    >['network'];
    if (network !== 'allowlist' && options.allowHost?.length) {
      throw new UsageError(`--allow-host needs --network allowlist (it was ${network}); an allowlist is the only policy that reads hosts`);
    }
    spec.containment = { network, hosts: network === 'allowlist' ? [...new Set(hosts)] : [] };
  }
  return Object.keys(spec).length > 0 ? spec : undefined;
}
