import {
  type CustomImageTemplate,
  type EnvironmentPolicy,
  environmentConfigIssues,
  type FleetReservation,
  type Principal,
  type Sandbox,
  type SandboxSpec,
  SandcastError,
} from '@sandcast/core';
import type { Repositories, Store } from '@sandcast/db';
import { isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { ensureWorkspace } from '../../checkpoints/workspace-dir.ts';
import type { EgressHooks } from '../../egress/egress.service.ts';
import type { RegisteredProvider } from '../../providers/provider-registry.ts';
import { activityEntry } from '../activity.service.ts';
import { bootSourceFor, fingerprintOf } from '../boot-source.ts';
import { imageMatches } from '../custom-images/image-link.ts';
import { templateRefOf } from '../custom-images/template-ref.ts';

type Doc = Record<string, unknown>;

/** How long one bootstrap command may run before the sandbox fails. */
const BOOTSTRAP_COMMAND_TIMEOUT_MS = 10 * 60_000;
/** How much of a failing bootstrap command's output the failure reason keeps. */
const BOOTSTRAP_OUTPUT_CHARS = 2000;

/**
 * Everything a sandbox is made from, resolved once: an exact environment revision, the open
 * (decrypted) config to hand the provider, the spec to pin, and the image to boot from. Plain
 * sandboxes take the environment's current revision; a session's primary sandbox takes its
 * binding's revision with the binding's and a one-off spec's overrides.
 */
export interface SandboxPlan {
  environmentId: string;
  revision: { id: string; number: number };
  registered: RegisteredProvider;
  /** Open config, overrides applied; never stored or returned. */
  config: Doc;
  spec: SandboxSpec;
  /** The top-level config fields a one-off spec set (stored on the sandbox). */
  configOverrides: Doc;
  image: CustomImageTemplate | null;
  sessionId: string | null;
  bindingName: string | null;
  /** A resource sandbox of the session: its logical id and what it reserves (fleet limits). */
  fleet?: { logicalId: string; reservation: FleetReservation } | undefined;
}

/** The environment's active image, when it was built from exactly what `config` boots. */
export async function matchingImage(
  repos: Repositories,
  environmentId: string,
  registered: RegisteredProvider,
  config: Doc,
): Promise<CustomImageTemplate | null> {
  const active = await repos.templates.active(environmentId);
  if (!active) return null;
  const fingerprint = fingerprintOf(bootSourceFor(registered, registered.provider.id, config));
  return imageMatches(active, { fingerprint }) ? active : null;
}

/** Refuses a config the instance's policy does not let boot (now), naming the revision. */
export function requireBootableConfig(plan: Pick<SandboxPlan, 'config' | 'revision'>, policy: EnvironmentPolicy): void {
  const issues = environmentConfigIssues(plan.config, policy);
  if (issues.length === 0) return;
  throw new SandcastError(
    'forbidden',
    `environment revision ${plan.revision.number} cannot boot here: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}; edit the environment to fix it`,
  );
}

/**
 * Gets fresh compute ready: the workspace directory of a checkpointed sandbox made, then the
 * pinned bootstrap commands in order; the first that fails says why, with its output. A recovery
 * runs the same on replacement compute (after restoring the workspace).
 */
export async function runBootstrap(
  provider: SandboxProvider,
  spec: SandboxSpec,
  instanceId: string,
  options: { prepareWorkspace: boolean },
): Promise<string | null> {
  if (options.prepareWorkspace && spec.durability === 'checkpointed') await ensureWorkspace(provider, instanceId, spec.workspacePath);
  const commands = spec.bootstrap;
  for (const [index, command] of commands.entries()) {
    const result = await provider.exec(instanceId, {
      command: ['sh', '-c', command],
      timeoutMs: BOOTSTRAP_COMMAND_TIMEOUT_MS,
    });
    if (result.exitCode !== 0 || result.timedOut) {
      const output = `${result.stdout}${result.stderr}`.trim().slice(-BOOTSTRAP_OUTPUT_CHARS);
      const how = result.timedOut ? `timed out after ${BOOTSTRAP_COMMAND_TIMEOUT_MS / 1000} s` : `exited ${result.exitCode}`;
      return `bootstrap command ${index + 1} of ${commands.length} ${how}${output ? `: ${output}` : ' (no output)'}`;
    }
  }
  return null;
}

/**
 * Creates a sandbox from a plan, eagerly: the record (with its activity, and whatever the caller
 * records beside it in the same transaction), the compute, then the bootstrap commands in order.
 * A failing bootstrap command leaves the sandbox `failed` with the command's output as the
 * reason; a provider that cannot create the compute fails it too, and the error is thrown.
 */
export async function provisionSandbox(
  deps: { store: Store; log: FastifyBaseLogger; egress?: EgressHooks | undefined },
  plan: SandboxPlan,
  actor: Principal,
  options: {
    countAsUse: boolean;
    activity: boolean;
    /** A warm-pool member: nobody's until claimed. */
    pooled?: boolean | undefined;
    /** Runs in the transaction that inserts the sandbox. */
    onInserted?: ((repos: Repositories, sandbox: Sandbox) => Promise<void>) | undefined;
  },
): Promise<Sandbox> {
  const { store } = deps;
  const { image } = plan;
  const row = {
    environmentId: plan.environmentId,
    environmentRevisionId: plan.revision.id,
    imageId: image?.id ?? null,
    provider: plan.registered.provider.id,
    spec: plan.spec,
    sessionId: plan.sessionId,
    bindingName: plan.bindingName,
    logicalId: plan.fleet?.logicalId ?? null,
    reservation: plan.fleet?.reservation ?? null,
    configOverrides: plan.configOverrides,
    createdByRole: actor.role,
    createdByKeyId: actor.keyId,
    pooled: options.pooled ?? false,
  };
  const record = options.activity
    ? activityEntry({
        action: 'sandbox.created',
        actor,
        subjectType: 'sandbox',
        subjectId: null,
        details: {
          environmentId: plan.environmentId,
          revision: plan.revision.number,
          imageId: image?.id ?? null,
          sessionId: plan.sessionId,
          bindingName: plan.bindingName,
          ...(plan.fleet ? { logicalId: plan.fleet.logicalId } : {}),
          configOverrides: Object.keys(plan.configOverrides),
        },
      })
    : undefined;
  // The row and its activity are one statement; a caller that records more beside them gets a transaction.
  const onInserted = options.onInserted;
  const sandbox = onInserted
    ? await store.transaction(async (repos) => {
        const inserted = await repos.sandboxes.insert(row, record);
        await onInserted(repos, inserted);
        return inserted;
      })
    : await store.repos.sandboxes.insert(row, record);
  let instanceId: string;
  try {
    const created = await plan.registered.provider.create({
      sandboxId: sandbox.id,
      environmentId: plan.environmentId,
      config: plan.config,
      template: image ? templateRefOf(image) : null,
    });
    instanceId = created.instanceId;
  } catch (error) {
    await store.repos.sandboxes.update(sandbox.id, { status: 'failed', failureReason: (error as Error).message });
    if (image && isProviderError(error) && error.code === 'not_found') {
      throw new SandcastError(
        'not_found',
        `the active custom image ${image.id} (${image.providerRef}) no longer exists at the provider; disable it or capture a new one`,
      );
    }
    throw error;
  }
  const touchImage = async () => {
    if (image && options.countAsUse) await store.repos.templates.touchLastUsed(image.id);
  };
  // Nothing to do between create and running (no bootstrap, no egress proxy to attach, no
  // workspace to prepare for checkpoints): the instance and `running` are one write.
  const nothingBetween =
    plan.spec.bootstrap.length === 0 && plan.spec.containment.network === 'deny' && plan.spec.durability !== 'checkpointed';
  if (nothingBetween) {
    const [running] = await Promise.all([
      store.repos.sandboxes.update(sandbox.id, { providerInstanceId: instanceId, status: 'running' }),
      touchImage(),
    ]);
    return running!;
  }
  // Recorded before bootstrap runs, so a server that dies meanwhile leaves compute it can find.
  await store.repos.sandboxes.update(sandbox.id, { providerInstanceId: instanceId });
  let failure: string | null = null;
  try {
    // Before bootstrap, so its commands reach what the containment allows.
    await deps.egress?.attach({ kind: 'sandbox', id: sandbox.id }, plan.registered.provider, instanceId, plan.spec.containment);
  } catch (error) {
    failure = `the egress proxy could not be attached: ${(error as Error).message}`;
  }
  try {
    failure ??= await runBootstrap(plan.registered.provider, plan.spec, instanceId, { prepareWorkspace: true });
  } catch (error) {
    failure = `bootstrap could not run: ${(error as Error).message}`;
  }
  if (failure !== null) {
    deps.log.info({ sandboxId: sandbox.id }, 'sandbox bootstrap failed');
    return (await store.repos.sandboxes.update(sandbox.id, { status: 'failed', failureReason: failure }))!;
  }
  const [running] = await Promise.all([store.repos.sandboxes.update(sandbox.id, { status: 'running' }), touchImage()]);
  return running!;
}
