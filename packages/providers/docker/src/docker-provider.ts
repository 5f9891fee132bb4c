import { createHash } from 'node:crypto';
import path from 'node:path';
import type {
  Availability,
  ProviderCapabilities,
  ProviderConfig,
  ProviderContext,
  SandboxProvider,
  SetupLease,
} from '@sandcast/provider-sdk';
import { ON_HOST_PROVIDER_CAPABILITIES, ProviderError } from '@sandcast/provider-sdk';
import type { z } from 'zod';
import { captureImage, deleteImage, releaseLeftoverPauses } from './capture.ts';
import { CaptureGate } from './capture-gate.ts';
import { listChanges } from './changes.ts';
import { DOCKER_RUNTIME_KNOBS, type DockerConfig, dockerConfigSchema } from './config.ts';
import { defaultEngineAddress, EnginePool, engineMessage, PROVIDER_ID } from './connection.ts';
import { createContainer, handleFor, inspectContainer, removeContainer, startStoppedContainer, stopContainer } from './containers.ts';
import { createDiskWatchdog, DEFAULT_DISK_CHECK_INTERVAL_MS } from './disk-limit.ts';
import { runExec, startExec } from './exec.ts';
import { exportWorkspace, importWorkspace, readFile, workspaceHostPath, writeFile } from './files.ts';
import { forkContainer } from './fork.ts';
import { listCapturedImages, listManagedInstances } from './gc.ts';
import { containerNetworkNamespace, openContainerPortStream } from './ports.ts';
import { openPty } from './pty.ts';

export interface DockerProviderOptions extends ProviderContext {
  /**
   * The engine: a socket path, `unix:///…` or `tcp://host:port`. Default: `DOCKER_HOST`, else
   * /var/run/docker.sock. An environment's config may name another engine (`dockerHost`).
   */
  dockerHost?: string | undefined;
  /** Labels this installation's containers; default derived from the data directory. */
  installationId?: string | undefined;
  /**
   * How often the sandboxes' writable layers are measured against their disk limit (`diskMb`).
   * Default 2000 ms. Each measurement walks every limited container's writable layer.
   */
  diskCheckIntervalMs?: number | undefined;
}

export const DOCKER_CAPABILITIES: Readonly<ProviderCapabilities> = ON_HOST_PROVIDER_CAPABILITIES;

/** How long availability() waits for the engine before calling it unreachable. */
const PING_TIMEOUT_MS = 3_000;

function parseConfig(config: ProviderConfig): DockerConfig {
  const parsed = dockerConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'invalid_config',
      message: `invalid Docker environment config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`,
    });
  }
  return parsed.data;
}

/** The Docker provider (ARCHITECTURE §5): sandboxes are containers, custom images are `docker commit`s. */
export function createDockerProvider(options: DockerProviderOptions): SandboxProvider {
  const pool = new EnginePool(defaultEngineAddress(options.dockerHost));
  // Several installations may share one engine: each lists and collects only its own containers.
  const installation = options.installationId ?? createHash('sha256').update(path.resolve(options.dataDir)).digest('hex').slice(0, 16);
  const gate = new CaptureGate();
  // One upkeep timer: disk limits, then pauses a killed capture left behind.
  const watchdog = createDiskWatchdog({
    pool,
    installation,
    intervalMs: options.diskCheckIntervalMs ?? DEFAULT_DISK_CHECK_INTERVAL_MS,
    alsoEachTick: () => releaseLeftoverPauses(pool, installation, gate),
  });
  watchdog.start();
  const context = { knownReason: watchdog.reasonFor, gate };
  const handle = (instanceId: string) => handleFor(pool, instanceId, context);

  return {
    id: PROVIDER_ID,
    displayName: 'Docker',
    configSchema: dockerConfigSchema as unknown as z.ZodType<ProviderConfig>,
    capabilities: DOCKER_CAPABILITIES,
    runtimeKnobs: DOCKER_RUNTIME_KNOBS,

    async availability(): Promise<Availability> {
      const where = pool.defaultAddress.url;
      try {
        const docker = pool.client();
        await Promise.race([
          docker.ping(),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS).unref(),
          ),
        ]);
        return { available: true };
      } catch (error) {
        return { available: false, reason: `no Docker engine reachable at ${where} (${engineMessage(error)})` };
      }
    },

    async create(request) {
      const instanceId = await createContainer(pool, {
        owner: { kind: 'sandbox', id: request.sandboxId, environmentId: request.environmentId, installation },
        config: parseConfig(request.config),
        template: request.template,
      });
      return { instanceId };
    },

    inspect: (instanceId) => inspectContainer(pool, instanceId, context),
    exec: (instanceId, request) => runExec(handle(instanceId), request),
    execStream: (instanceId, request) => startExec(handle(instanceId), request),
    openPty: (instanceId, ptyOptions) => openPty(handle(instanceId), ptyOptions),
    openPortStream: (instanceId, port) => openContainerPortStream(handle(instanceId), port),
    networkNamespace: (instanceId) => containerNetworkNamespace(handle(instanceId)),
    readFile: (instanceId, path) => readFile(handle(instanceId), path),
    writeFile: (instanceId, path, data, writeOptions) => writeFile(handle(instanceId), path, data, writeOptions),
    workspaceHostPath: (instanceId, path) => workspaceHostPath(handle(instanceId), path),
    exportWorkspace: (instanceId, path) => exportWorkspace(handle(instanceId), path),
    importWorkspace: (instanceId, tar, path) => importWorkspace(handle(instanceId), tar, path),
    fork: (instanceId, targets) => forkContainer(pool, handle(instanceId), targets),
    destroy: (instanceId) => removeContainer(pool, instanceId),
    stop: (instanceId) => stopContainer(pool, instanceId),
    start: (instanceId) => startStoppedContainer(pool, instanceId),
    listInstances: () => listManagedInstances(pool, installation),
    listCapturedTemplates: () => listCapturedImages(pool, installation),

    async startInteractiveSetup(request): Promise<SetupLease> {
      const leaseId = await createContainer(pool, {
        owner: {
          kind: 'setup',
          id: request.setupSessionId,
          environmentId: request.environmentId,
          installation,
          expiresAt: new Date(Date.now() + request.ttlSeconds * 1000),
        },
        config: parseConfig(request.config),
        template: request.source,
      });
      return { leaseId, connection: { type: 'pty' } };
    },
    getInteractiveSetup: (leaseId) => inspectContainer(pool, leaseId, context),
    captureTemplate: (request) => captureImage(handle(request.leaseId), { ...request, installation }),
    cancelInteractiveSetup: (leaseId) => removeContainer(pool, leaseId),
    deleteTemplate: (template) => deleteImage(pool, template),
    listChanges: (leaseId) => listChanges(handle(leaseId)),

    async close() {
      // dockerode holds no connections between requests; only the disk watchdog's timer to stop.
      watchdog.stop();
    },
  };
}
