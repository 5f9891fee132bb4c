import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { type InstanceInfo, type ManagedInstance, ProviderError } from '@sandcast/provider-sdk';
import { AGENT_SANDBOX, type Cluster, call, callOrNull, servesAgentSandbox } from './cluster.ts';
import { PROVIDER_ID } from './config.ts';
import { ANNOTATION, LABEL, networkPolicyFor, type PodPlan, podFor, sandboxFor, selectorFor } from './manifests.ts';
import { awaitObject } from './watch.ts';

/** How sandboxes are represented: plain pods, or agent-sandbox `Sandbox`s (preferred when served). */
export type WorkloadMode = 'pods' | 'agent-sandbox';

/** Instance names say how they were made, so a cluster that gains or loses the CRD keeps its old instances. */
const PREFIX: Record<WorkloadMode, string> = { pods: 'sandcast-pod-', 'agent-sandbox': 'sandcast-sbx-' };

function modeOf(name: string): WorkloadMode | null {
  if (name.startsWith(PREFIX.pods)) return 'pods';
  if (name.startsWith(PREFIX['agent-sandbox'])) return 'agent-sandbox';
  return null;
}

const IMAGE_ERRORS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export interface InstanceTimings {
  /** How long create waits for the pod to run. */
  startTimeoutMs: number;
  /** How often a starting or terminating pod is read again. */
  pollIntervalMs: number;
}

interface Metadata {
  name?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: unknown;
}

/** Creates, reads, lists and removes sandbox instances in one namespace. */
export class Instances {
  private modeDecided: Promise<WorkloadMode> | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly installation: string,
    private readonly preferred: WorkloadMode | 'auto',
    private readonly timings: InstanceTimings,
  ) {}

  /** The mode new instances use: the configured one, or agent-sandbox when discovery finds it. */
  mode(): Promise<WorkloadMode> {
    if (this.preferred !== 'auto') return Promise.resolve(this.preferred);
    this.modeDecided ??= servesAgentSandbox(this.cluster).then(
      (served): WorkloadMode => (served ? 'agent-sandbox' : 'pods'),
      (error: unknown) => {
        this.modeDecided = null;
        throw error;
      },
    );
    return this.modeDecided;
  }

  async create(plan: Omit<PodPlan, 'name'>): Promise<string> {
    const mode = await this.mode();
    const name = `${PREFIX[mode]}${randomBytes(8).toString('hex')}`;
    const full = { ...plan, name };
    const { cluster } = this;
    const namespace = cluster.namespace;
    // The policy first: the pod never runs a moment without it.
    await call(cluster, 'create the sandbox network policy', () =>
      cluster.networking.createNamespacedNetworkPolicy({ namespace, body: networkPolicyFor(name, plan.owner) }),
    );
    try {
      if (mode === 'pods')
        await call(cluster, 'create the sandbox pod', () => cluster.core.createNamespacedPod({ namespace, body: podFor(full) }));
      else {
        await call(cluster, 'create the Sandbox', () =>
          cluster.custom.createNamespacedCustomObject({ ...AGENT_SANDBOX, namespace, body: sandboxFor(full) }),
        );
      }
      await this.waitUntilRunning(name, plan.template !== null && plan.template !== undefined);
      return name;
    } catch (error) {
      await this.destroy(name).catch(() => undefined);
      throw error;
    }
  }

  private waitUntilRunning(name: string, fromTemplate: boolean): Promise<true> {
    return awaitObject<V1Pod, true>(this.cluster, {
      path: this.podsPath(),
      name,
      read: () => this.readPod(name),
      timeoutMs: this.timings.startTimeoutMs,
      pollIntervalMs: this.timings.pollIntervalMs,
      decide: (pod) => {
        const waiting = pod?.status?.containerStatuses?.[0]?.state?.waiting;
        if (waiting?.reason && IMAGE_ERRORS.has(waiting.reason)) {
          const image = pod?.spec?.containers[0]?.image ?? 'the image';
          throw new ProviderError({
            provider: PROVIDER_ID,
            code: fromTemplate ? 'not_found' : 'invalid_config',
            message: fromTemplate
              ? `the captured image ${image} cannot be pulled (${waiting.message ?? waiting.reason}); it was deleted, or the pull secret lacks access — capture again`
              : `the cluster cannot pull ${image} (${waiting.message ?? waiting.reason}); check the image name and the namespace's pull secrets`,
          });
        }
        const info = pod ? infoOf(pod) : null;
        if (info?.status === 'failed') {
          throw new ProviderError({
            provider: PROVIDER_ID,
            code: 'backend',
            message: `sandbox pod ${name} failed to start: ${info.detail ?? 'no reason given'}`,
          });
        }
        return info?.status === 'running' ? true : undefined;
      },
      onTimeout: (pod) =>
        new ProviderError({
          provider: PROVIDER_ID,
          code: 'timeout',
          retryable: true,
          message: `sandbox pod ${name} did not run within ${Math.round(this.timings.startTimeoutMs / 1000)} s (${pod?.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? pod?.status?.phase ?? 'not created yet'}); check the namespace's quota and the nodes (kubectl describe pod ${name})`,
        }),
    });
  }

  private podsPath(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.cluster.namespace)}/pods`;
  }

  private readPod(name: string): Promise<V1Pod | null> {
    return callOrNull(this.cluster, `read pod ${name}`, () =>
      this.cluster.core.readNamespacedPod({ name, namespace: this.cluster.namespace }),
    );
  }

  /** The pod of a live instance, or null when it is gone (or going). */
  async livePod(name: string): Promise<V1Pod | null> {
    const mode = modeOf(name);
    if (mode === null) return null;
    if (mode === 'agent-sandbox') {
      const sandbox = await callOrNull(this.cluster, `read Sandbox ${name}`, () =>
        this.cluster.custom.getNamespacedCustomObject({ ...AGENT_SANDBOX, namespace: this.cluster.namespace, name }),
      );
      if (!sandbox || (sandbox as { metadata?: { deletionTimestamp?: string } }).metadata?.deletionTimestamp) return null;
    }
    const pod = await this.readPod(name);
    return pod && !pod.metadata?.deletionTimestamp ? pod : null;
  }

  async inspect(name: string): Promise<InstanceInfo> {
    const pod = await this.livePod(name);
    return pod ? infoOf(pod) : { status: 'missing' };
  }

  /** Removes the instance and its policy, and waits until its pod is gone; a missing one is fine. */
  async destroy(name: string): Promise<void> {
    const mode = modeOf(name);
    if (mode === null) return;
    const { cluster } = this;
    const namespace = cluster.namespace;
    // A Sandbox takes its pod with it; a pod is deleted directly (so is one a vanished Sandbox left behind).
    const sandboxDeleted =
      mode === 'agent-sandbox' &&
      (await callOrNull(cluster, `delete Sandbox ${name}`, () =>
        cluster.custom.deleteNamespacedCustomObject({
          ...AGENT_SANDBOX,
          namespace,
          name,
          gracePeriodSeconds: 0,
          propagationPolicy: 'Foreground',
        }),
      )) !== null;
    if (!sandboxDeleted) {
      await callOrNull(cluster, `delete pod ${name}`, () => cluster.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }));
    }
    await callOrNull(cluster, `delete network policy ${name}`, () => cluster.networking.deleteNamespacedNetworkPolicy({ name, namespace }));
    await awaitObject<V1Pod, true>(cluster, {
      path: this.podsPath(),
      name,
      read: () => this.readPod(name),
      decide: (pod) => (pod === null ? true : undefined),
      timeoutMs: this.timings.startTimeoutMs,
      pollIntervalMs: this.timings.pollIntervalMs,
      onTimeout: () =>
        new ProviderError({
          provider: PROVIDER_ID,
          code: 'timeout',
          retryable: true,
          message: `pod ${name} is still terminating; destroy it again later`,
        }),
    });
  }

  /** Every instance of this installation, pods and Sandboxes alike. */
  async list(): Promise<ManagedInstance[]> {
    const { cluster } = this;
    const namespace = cluster.namespace;
    const labelSelector = selectorFor(this.installation);
    const pods = await call(cluster, 'list the sandbox pods', () => cluster.core.listNamespacedPod({ namespace, labelSelector }));
    const live = (meta: Metadata | undefined): meta is Metadata => meta !== undefined && !meta.deletionTimestamp;
    const found: Metadata[] = pods.items
      .map((p) => p.metadata as Metadata | undefined)
      .filter(live)
      .filter((m) => modeOf(m.name ?? '') === 'pods');
    if ((await this.mode()) === 'agent-sandbox') {
      const sandboxes = (await call(cluster, 'list the Sandboxes', () =>
        cluster.custom.listNamespacedCustomObject({ ...AGENT_SANDBOX, namespace, labelSelector }),
      )) as { items: Array<{ metadata?: Metadata }> };
      found.push(...sandboxes.items.map((s) => s.metadata).filter(live));
    }
    return found.flatMap((meta) => {
      const ownerId = meta.annotations?.[ANNOTATION.ownerId];
      const kind = meta.labels?.[LABEL.ownerKind];
      if (!meta.name || !ownerId || (kind !== 'sandbox' && kind !== 'setup')) return [];
      return [{ instanceId: meta.name, ownerId, ownerKind: kind }];
    });
  }
}

function infoOf(pod: V1Pod): InstanceInfo {
  const phase = pod.status?.phase;
  const state = pod.status?.containerStatuses?.[0]?.state;
  if (phase === 'Running' && state?.running) return { status: 'running' };
  if (phase === 'Pending' || (phase === 'Running' && state?.waiting)) {
    const waiting = state?.waiting;
    if (waiting?.reason && IMAGE_ERRORS.has(waiting.reason)) return { status: 'failed', detail: waiting.message ?? waiting.reason };
    return { status: 'starting', detail: waiting?.reason };
  }
  const terminated = state?.terminated;
  const detail = terminated
    ? `the sandbox container exited (${terminated.reason ?? 'exit'} ${terminated.exitCode})`
    : (pod.status?.message ?? pod.status?.reason ?? `pod phase ${phase ?? 'unknown'}`);
  return { status: 'failed', detail };
}
