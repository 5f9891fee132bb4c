import { randomBytes } from 'node:crypto';
import type { InstanceInfo, TemplateRef } from '@sandcast/provider-sdk';
import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import type { CaptureGate } from './capture-gate.ts';
import { DEFAULT_PIDS_LIMIT, type DockerConfig, WORKDIR } from './config.ts';
import {
  ENGINE_CALL_DEADLINE_MS,
  type EnginePool,
  formatInstanceId,
  PROVIDER_ID,
  parseInstanceId,
  statusOf,
  toProviderError,
  withDeadline,
} from './connection.ts';
import { DEFAULT_DISK_MB, diskHostConfig, diskStopReason, isStorageOptUnsupported } from './disk-limit.ts';
import { containerLabels, LABEL, type OwnerKind } from './labels.ts';

/** A container resolved from an instance id, with the engine it lives on. */
export interface ContainerHandle {
  docker: Docker;
  container: Docker.Container;
  engineUrl: string;
  instanceId: string;
  /** Why the container was stopped, when Sandcast stopped it (its disk limit). */
  stoppedReason?: (() => Promise<string | undefined>) | undefined;
  /** Keeps a capture's pause off execs that are still starting; absent in code that never captures. */
  gate?: CaptureGate | undefined;
}

/** What the provider knows about its containers beyond the engine's answers. */
export interface HandleContext {
  knownReason?: ((instanceId: string) => string | undefined) | undefined;
  gate?: CaptureGate | undefined;
}

export function handleFor(pool: EnginePool, instanceId: string, context: HandleContext = {}): ContainerHandle {
  const { knownReason, gate } = context;
  const { containerId, engineUrl } = parseInstanceId(instanceId);
  const url = engineUrl ?? pool.defaultAddress.url;
  const docker = pool.client(url);
  const container = docker.getContainer(containerId);
  return {
    docker,
    container,
    engineUrl: url,
    instanceId,
    stoppedReason: async () => knownReason?.(instanceId) ?? (await diskStopReason(container)),
    gate,
  };
}

/** Capabilities a sandbox never needs; Docker's default set minus these stays enough for apt and compilers. */
const DROPPED_CAPABILITIES = ['NET_RAW', 'MKNOD', 'AUDIT_WRITE'];

const slug = (text: string, max: number) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, max) || 'x';

/** Which image a new container boots from; throws the code an operator can act on when it is absent. */
async function resolveImage(docker: Docker, config: DockerConfig, template: TemplateRef | null | undefined, engineUrl: string) {
  if (template) {
    if (template.kind !== 'image') {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'invalid_config',
        message: `the Docker provider boots only from images, not from a ${template.kind} template`,
      });
    }
    try {
      return await docker.getImage(template.ref).inspect();
    } catch (error) {
      if (statusOf(error) === 404) {
        throw new ProviderError({
          provider: PROVIDER_ID,
          code: 'not_found',
          message: `captured image ${template.ref} no longer exists on the engine at ${engineUrl}; capture a new custom image or disable this one`,
          cause: error,
        });
      }
      throw toProviderError(error, { action: `inspect image ${template.ref}`, engineUrl });
    }
  }
  try {
    return await docker.getImage(config.image).inspect();
  } catch (error) {
    if (statusOf(error) === 404) {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'invalid_config',
        message: `image ${config.image} is not present on the engine at ${engineUrl}; pull, load or build it there first (Sandcast does not pull images)`,
        cause: error,
      });
    }
    throw toProviderError(error, { action: `inspect image ${config.image}`, engineUrl });
  }
}

export interface CreateContainerRequest {
  owner: { kind: OwnerKind; id: string; environmentId: string; installation: string; expiresAt?: Date };
  config: DockerConfig;
  template?: TemplateRef | null | undefined;
}

/** Creates and starts a sandbox or setup container; returns its instance id. */
export async function createContainer(pool: EnginePool, request: CreateContainerRequest): Promise<string> {
  const engineUrl = pool.register(request.config.dockerHost);
  const docker = pool.client(engineUrl);
  const { config } = request;
  await resolveImage(docker, config, request.template, engineUrl);
  const memory = config.memoryMb === undefined ? undefined : config.memoryMb * 1024 * 1024;
  const diskMb = config.diskMb ?? DEFAULT_DISK_MB;
  const options: Docker.ContainerCreateOptions = {
    name: `sandcast-${request.owner.kind}-${slug(request.owner.id, 48)}-${randomBytes(3).toString('hex')}`,
    Image: request.template?.ref ?? config.image,
    // A process that only waits, under Docker's init (which reaps orphans and forwards signals):
    // the sandbox stays up between execs whatever the image's own entrypoint does.
    Entrypoint: ['sleep', 'infinity'],
    Cmd: [],
    WorkingDir: WORKDIR,
    Hostname: 'sandbox',
    Env: Object.entries(config.env ?? {}).map(([key, value]) => `${key}=${value}`),
    Labels: containerLabels({ ...request.owner, diskMb }),
    HostConfig: {
      Init: true,
      NetworkMode: config.network,
      NanoCpus: config.cpu === undefined ? undefined : Math.round(config.cpu * 1e9),
      Memory: memory,
      MemorySwap: memory,
      PidsLimit: config.pidsLimit ?? DEFAULT_PIDS_LIMIT,
      CapDrop: DROPPED_CAPABILITIES,
      SecurityOpt: ['no-new-privileges'],
      RestartPolicy: { Name: 'no' },
    },
  };
  const create = (storageOpt: boolean) =>
    withDeadline(
      docker.createContainer({ ...options, HostConfig: { ...options.HostConfig, ...diskHostConfig(diskMb, storageOpt) } }),
      ENGINE_CALL_DEADLINE_MS,
      {
        action: 'create a sandbox container',
        engineUrl,
      },
    );
  let container: Docker.Container;
  try {
    // Try a sized rootfs once per engine; overlay2 refuses it unless on xfs with pquota.
    const known = pool.storageOptSupported.get(engineUrl);
    try {
      container = await create(known !== false);
      if (known === undefined) pool.storageOptSupported.set(engineUrl, true);
    } catch (error) {
      if (known !== undefined || !isStorageOptUnsupported(error)) throw error;
      pool.storageOptSupported.set(engineUrl, false);
      container = await create(false);
    }
  } catch (error) {
    throw toProviderError(error, { action: `create a container from ${config.image}`, engineUrl });
  }
  try {
    await withDeadline(container.start(), ENGINE_CALL_DEADLINE_MS, { action: 'start a sandbox container', engineUrl });
  } catch (error) {
    await container.remove({ force: true, v: true }).catch(() => undefined);
    throw toProviderError(error, { action: `start the container from ${request.template?.ref ?? config.image}`, engineUrl });
  }
  return formatInstanceId(container.id, engineUrl, pool);
}

/** The container's state in the contract's vocabulary; a container that is gone is `missing`. */
export async function inspectContainer(pool: EnginePool, instanceId: string, context: HandleContext = {}): Promise<InstanceInfo> {
  const { container, engineUrl, stoppedReason } = handleFor(pool, instanceId, context);
  let info: Docker.ContainerInspectInfo;
  try {
    info = await withDeadline(container.inspect(), ENGINE_CALL_DEADLINE_MS, { action: 'inspect a sandbox', engineUrl });
  } catch (error) {
    if (statusOf(error) === 404) return { status: 'missing' };
    throw toProviderError(error, { action: 'inspect a sandbox', engineUrl });
  }
  const state = info.State;
  switch (state.Status) {
    case 'created':
    case 'restarting':
      return { status: 'starting' };
    case 'running':
      return { status: 'running' };
    case 'paused':
      return { status: 'paused' };
    case 'removing':
      return { status: 'stopped', detail: 'being removed' };
    case 'dead':
      return { status: 'failed', detail: state.Error || 'the container is dead' };
    case 'exited': {
      const reason = state.ExitCode === 137 ? await stoppedReason?.() : undefined;
      if (reason) return { status: 'failed', detail: reason };
      if (state.OOMKilled) return { status: 'failed', detail: 'killed for exceeding its memory limit' };
      if (state.Error) return { status: 'failed', detail: state.Error };
      return { status: 'stopped', detail: `exited with code ${state.ExitCode}` };
    }
    default:
      return { status: 'failed', detail: `unknown container state ${state.Status}` };
  }
}

/** Removes the container and its anonymous volumes; a container that is already gone is fine. */
export async function removeContainer(pool: EnginePool, instanceId: string): Promise<void> {
  const { docker, container, engineUrl } = handleFor(pool, instanceId);
  try {
    const info = await container.inspect().catch(() => null);
    await withDeadline(container.remove({ force: true, v: true }), ENGINE_CALL_DEADLINE_MS, {
      action: 'remove a sandbox container',
      engineUrl,
    });
    // A fork's image goes with the last fork: the engine refuses while another container uses it.
    if (info?.Config.Labels?.[LABEL.forkImage] === 'true')
      await docker
        .getImage(info.Image)
        .remove()
        .catch(() => undefined);
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return;
    // "removal already in progress": someone else is finishing the job.
    if (status === 409) return;
    throw toProviderError(error, { action: 'remove a sandbox container', engineUrl });
  }
}

/** How long `docker stop` lets the sandbox's processes exit on SIGTERM before it kills them. */
const STOP_GRACE_SECONDS = 5;

/**
 * Stops the container, keeping its writable layer (`docker stop`); a stopped one is fine, a
 * missing one is `not_found`. `start` runs it again: the same container, the same files.
 */
export async function stopContainer(pool: EnginePool, instanceId: string): Promise<void> {
  const { container, engineUrl } = handleFor(pool, instanceId);
  try {
    await withDeadline(container.stop({ t: STOP_GRACE_SECONDS }), ENGINE_CALL_DEADLINE_MS, {
      action: 'stop a sandbox container',
      engineUrl,
    });
  } catch (error) {
    // 304: already stopped.
    if (statusOf(error) === 304) return;
    throw missingOr(error, instanceId, { action: 'stop a sandbox container', engineUrl });
  }
}

export async function startStoppedContainer(pool: EnginePool, instanceId: string): Promise<void> {
  const { container, engineUrl } = handleFor(pool, instanceId);
  try {
    await withDeadline(container.start(), ENGINE_CALL_DEADLINE_MS, { action: 'start a sandbox container', engineUrl });
  } catch (error) {
    // 304: already running.
    if (statusOf(error) === 304) return;
    throw missingOr(error, instanceId, { action: 'start a sandbox container', engineUrl });
  }
}

function missingOr(error: unknown, instanceId: string, context: { action: string; engineUrl: string }): ProviderError {
  if (statusOf(error) === 404) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_found',
      message: `sandbox container ${instanceId.slice(0, 12)} no longer exists on the engine at ${context.engineUrl}; create a new sandbox`,
      cause: error,
    });
  }
  return toProviderError(error, context);
}
