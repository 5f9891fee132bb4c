import {
  type Availability,
  ON_HOST_PROVIDER_CAPABILITIES,
  type ProviderCapabilities,
  type ProviderConfig,
  ProviderError,
  type SandboxProvider,
  type SetupLease,
} from '@sandcast/provider-sdk';
import type { z } from 'zod';
import { type CaptureContext, captureImage, deleteImage } from './capture.ts';
import { type ClusterAccess, connectCluster, toProviderError } from './cluster.ts';
import { type CaptureSettings, KUBERNETES_RUNTIME_KNOBS, type KubernetesConfig, kubernetesConfigSchema, PROVIDER_ID } from './config.ts';
import { runExec, startExec } from './exec.ts';
import { exportWorkspace, importWorkspace, readFile, writeFile } from './files.ts';
import { Instances, type WorkloadMode } from './instances.ts';
import { openPty } from './pty.ts';

export interface KubernetesProviderOptions {
  /** A kubeconfig (the connection's secret) or the server's own service account. */
  access: ClusterAccess;
  /** The namespace sandboxes, their policies and the committer Jobs live in. */
  namespace: string;
  /** Labels this installation's objects; garbage collection lists only its own. */
  installationId: string;
  /** `auto` (default) uses agent-sandbox `Sandbox`s when the cluster serves the CRD, else pods. */
  workloads?: WorkloadMode | 'auto' | undefined;
  /** Where captures go; without it the provider offers no capture. */
  capture?: CaptureSettings | undefined;
  /** How long create waits for a pod to run. Default 120 s. */
  startTimeoutMs?: number | undefined;
  /** How often a starting pod or a running Job is read again. Default 250 ms. */
  pollIntervalMs?: number | undefined;
}

/** How long availability() waits for the API server. */
const VERSION_TIMEOUT_MS = 5_000;

export function kubernetesCapabilities(captures: boolean): ProviderCapabilities {
  return {
    ...ON_HOST_PROVIDER_CAPABILITIES,
    // A setup sandbox exists to be captured: without a registry there is neither.
    interactiveSetup: captures,
    interactiveSetupConnectionTypes: captures ? ['pty'] : [],
    templateCapture: captures,
    templateRefKind: captures ? 'image' : null,
    templateDelete: captures,
    // No baseline to diff against without reading the node's snapshotter.
    changeTracking: false,
    portForward: false,
    // Its exec socket does not take a stdin stream yet.
    duplexCommandStream: false,
    // A pod's writable layer cannot be copied into new pods without a commit Job per fork.
    fork: false,
    // A pod's network namespace lives on its node, not beside the server: no egress relay.
    egressProxy: false,
    // A pod cannot be stopped; deleting it loses its root, so there is no honest stop/start.
    stopStart: false,
  };
}

function parseConfig(config: ProviderConfig): KubernetesConfig {
  const parsed = kubernetesConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'invalid_config',
      message: `invalid Kubernetes environment config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`,
    });
  }
  return parsed.data;
}

function unsupported(what: string): ProviderError {
  return new ProviderError({ provider: PROVIDER_ID, code: 'unsupported', message: `the Kubernetes provider does not offer ${what}` });
}

/**
 * The Kubernetes provider: a sandbox is a locked-down pod (or an agent-sandbox `Sandbox`) with a
 * deny-all network policy; commands, terminals and files go over pods/exec; a capture is a
 * committer Job on the setup pod's node that pushes an image to the connection's registry.
 */
export function createKubernetesProvider(options: KubernetesProviderOptions): SandboxProvider {
  const cluster = connectCluster(options.access, options.namespace);
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const instances = new Instances(cluster, options.installationId, options.workloads ?? 'auto', {
    startTimeoutMs: options.startTimeoutMs ?? 120_000,
    pollIntervalMs,
  });
  const capture: CaptureContext | null = options.capture
    ? { cluster, instances, settings: options.capture, installation: options.installationId, pollIntervalMs }
    : null;
  const pullSecretName = options.capture?.pullSecretName ?? options.capture?.pushSecretName;
  const owner = (kind: 'sandbox' | 'setup', id: string, environmentId: string) => ({
    kind,
    id,
    environmentId,
    installation: options.installationId,
  });
  const requireCapture = (): CaptureContext => {
    if (!capture)
      throw unsupported(
        'setup and capture here: the connection names no registry to push captures to (set captureRegistry and committerImage on it)',
      );
    return capture;
  };

  return {
    id: PROVIDER_ID,
    displayName: 'Kubernetes',
    configSchema: kubernetesConfigSchema as unknown as z.ZodType<ProviderConfig>,
    capabilities: kubernetesCapabilities(capture !== null),
    runtimeKnobs: KUBERNETES_RUNTIME_KNOBS,

    async availability(): Promise<Availability> {
      try {
        await Promise.race([
          cluster.version.getCode(),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error(`no answer within ${VERSION_TIMEOUT_MS} ms`)), VERSION_TIMEOUT_MS).unref(),
          ),
        ]);
      } catch (error) {
        return { available: false, reason: toProviderError(error, { action: 'read its version', cluster }).message };
      }
      try {
        // The credentials may list pods in the namespace: the least the provider needs.
        await instances.list();
        return { available: true };
      } catch (error) {
        return {
          available: false,
          reason: toProviderError(error, { action: `list pods in namespace ${cluster.namespace}`, cluster }).message,
        };
      }
    },

    async create(request) {
      const instanceId = await instances.create({
        owner: owner('sandbox', request.sandboxId, request.environmentId),
        config: parseConfig(request.config),
        template: request.template,
        pullSecretName,
      });
      return { instanceId };
    },
    inspect: (instanceId) => instances.inspect(instanceId),
    exec: (instanceId, request) => runExec(cluster, instanceId, request),
    execStream: (instanceId, request) => startExec(cluster, instanceId, request),
    openPty: (instanceId, ptyOptions) => openPty(cluster, instanceId, ptyOptions),
    readFile: (instanceId, path) => readFile(cluster, instanceId, path),
    writeFile: (instanceId, path, data, writeOptions) => writeFile(cluster, instanceId, path, data, writeOptions),
    exportWorkspace: (instanceId, path) => exportWorkspace(cluster, instanceId, path),
    importWorkspace: (instanceId, tar, path) => importWorkspace(cluster, instanceId, tar, path),
    destroy: (instanceId) => instances.destroy(instanceId),
    listInstances: () => instances.list(),

    async startInteractiveSetup(request): Promise<SetupLease> {
      requireCapture();
      const leaseId = await instances.create({
        owner: owner('setup', request.setupSessionId, request.environmentId),
        config: parseConfig(request.config),
        template: request.source,
        pullSecretName,
        ttlSeconds: request.ttlSeconds,
      });
      return { leaseId, connection: { type: 'pty' } };
    },
    getInteractiveSetup: (leaseId) => instances.inspect(leaseId),
    captureTemplate: async (request) => captureImage(requireCapture(), request),
    cancelInteractiveSetup: (leaseId) => instances.destroy(leaseId),
    deleteTemplate: async (template) => deleteImage(requireCapture(), template),
    listChanges: async () => {
      throw unsupported('change tracking');
    },
  };
}
