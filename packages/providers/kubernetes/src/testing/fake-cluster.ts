import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_NODE_NAME, type FakeNode } from './fake-node.ts';

/** A stored object, as the API server keeps it: JSON with metadata. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; uid: string }>;
    creationTimestamp?: string;
    resourceVersion?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

type Pod = KubeObject & { spec: PodSpec };
interface PodSpec {
  containers: Array<Record<string, unknown>>;
  nodeName?: string;
  [key: string]: unknown;
}

let resourceVersion = 1;

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * The fake cluster's state and its controllers: the scheduler and kubelet for pods (on the one
 * docker-backed node), the agent-sandbox controller (a Sandbox owns a pod of its name) and the Job
 * controller for committer Jobs (the node commits the container with its runtime).
 */
export class FakeCluster {
  /** `<kind>/<namespace>/<name>` → object. */
  readonly objects = new Map<string, KubeObject>();
  readonly containerOf = new Map<string, string>();
  private readonly volumesOf = new Map<string, string[]>();
  private readonly watchers = new Set<(type: WatchEventType, object: KubeObject) => void>();
  private readonly starting = new Map<string, Promise<void>>();

  constructor(
    readonly node: FakeNode,
    private readonly problem: (message: string) => void,
  ) {}

  key(kind: string, namespace: string, name: string): string {
    return `${kind}/${namespace}/${name}`;
  }

  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(this.key(kind, namespace, name));
  }

  list(kind: string, namespace: string, selector: Record<string, string>): KubeObject[] {
    return [...this.objects.values()].filter(
      (o) =>
        o.kind === kind && o.metadata.namespace === namespace && Object.entries(selector).every(([k, v]) => o.metadata.labels?.[k] === v),
    );
  }

  /** Stores a new object; answers null when the name is taken. */
  add(kind: string, namespace: string, object: KubeObject): KubeObject | null {
    const key = this.key(kind, namespace, object.metadata.name);
    if (this.objects.has(key)) return null;
    object.metadata = {
      ...object.metadata,
      namespace,
      uid: randomUUID(),
      creationTimestamp: new Date().toISOString(),
      resourceVersion: String(resourceVersion++),
    };
    this.objects.set(key, object);
    this.emit('ADDED', object);
    if (kind === 'Pod') this.schedule(object as Pod);
    if (kind === 'Sandbox') this.reconcileSandbox(object, namespace);
    if (kind === 'Job') void this.runJob(object, namespace);
    return object;
  }

  async remove(kind: string, namespace: string, name: string): Promise<KubeObject | null> {
    const key = this.key(kind, namespace, name);
    const object = this.objects.get(key);
    if (!object) return null;
    this.objects.delete(key);
    this.emit('DELETED', object);
    if (kind === 'Pod') {
      await this.starting.get(key);
      const container = this.containerOf.get(key);
      this.containerOf.delete(key);
      if (container) await this.node.remove(container);
      for (const dir of this.volumesOf.get(key) ?? []) await rm(dir, { recursive: true, force: true });
      this.volumesOf.delete(key);
    }
    // Garbage collection of dependents, as the API server's owner references do.
    for (const dependent of [...this.objects.values()]) {
      if (dependent.metadata.namespace === namespace && dependent.metadata.ownerReferences?.some((o) => o.uid === object.metadata.uid)) {
        await this.remove(dependent.kind, namespace, dependent.metadata.name);
      }
    }
    return object;
  }

  /** The container backing a running pod. */
  async runningContainer(namespace: string, name: string): Promise<string | null> {
    const key = this.key('Pod', namespace, name);
    await this.starting.get(key);
    const container = this.containerOf.get(key);
    return container && (await this.node.running(container)) ? container : null;
  }

  /** Subscribes to every change, as a watch does; answers the unsubscribe. */
  subscribe(listener: (type: WatchEventType, object: KubeObject) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private emit(type: WatchEventType, object: KubeObject): void {
    for (const listener of this.watchers) listener(type, object);
  }

  private changed(object: KubeObject): void {
    object.metadata.resourceVersion = String(resourceVersion++);
    this.emit('MODIFIED', object);
  }

  private schedule(pod: Pod): void {
    const key = this.key('Pod', pod.metadata.namespace ?? '', pod.metadata.name);
    pod.spec.nodeName = FAKE_NODE_NAME;
    pod.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] };
    this.starting.set(key, this.startPod(key, pod));
  }

  private async startPod(key: string, pod: Pod): Promise<void> {
    const spec = pod.spec;
    for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
      if (spec[field] !== undefined) this.problem(`pod ${pod.metadata.name}: the fake node does not run pods with ${field}`);
    }
    // emptyDir volumes are fresh host directories, mode 0777 as the kubelet makes them.
    const volumes = new Map<string, string>();
    for (const volume of (spec.volumes ?? []) as Array<{ name: string; emptyDir?: unknown }>) {
      if (volume.emptyDir === undefined) {
        this.problem(`pod ${pod.metadata.name}: the fake node only mounts emptyDir volumes`);
        continue;
      }
      const dir = await mkdtemp(join(tmpdir(), 'sandcast-k8s-fake-vol-'));
      await chmod(dir, 0o777);
      volumes.set(volume.name, dir);
    }
    this.volumesOf.set(key, [...volumes.values()]);
    const planOf = (container: Record<string, unknown>) => {
      const security = (container.securityContext ?? {}) as Record<string, unknown>;
      const podSecurity = (spec.securityContext ?? {}) as Record<string, unknown>;
      const limits = ((container.resources as { limits?: Record<string, string> } | undefined)?.limits ?? {}) as Record<string, string>;
      const runAsUser = (security.runAsUser ?? podSecurity.runAsUser) as number | undefined;
      const mounts = (container.volumeMounts ?? []) as Array<{ name: string; mountPath: string }>;
      return {
        podKey: key,
        image: String(container.image),
        command: [...((container.command as string[] | undefined) ?? []), ...((container.args as string[] | undefined) ?? [])],
        workingDir: container.workingDir as string | undefined,
        env: ((container.env as Array<{ name: string; value: string }> | undefined) ?? []).map((e) => `${e.name}=${e.value}`),
        user: runAsUser === undefined ? undefined : String(runAsUser),
        capDrop: ((security.capabilities as { drop?: string[] } | undefined)?.drop ?? []).map((c) => c.toUpperCase()),
        noNewPrivileges: security.allowPrivilegeEscalation === false,
        readOnlyRoot: security.readOnlyRootFilesystem === true,
        nanoCpus: limits.cpu ? Math.round(parseCpu(limits.cpu) * 1e9) : undefined,
        memoryBytes: limits.memory ? parseMemory(limits.memory) : undefined,
        binds: mounts.flatMap((m) => {
          const dir = volumes.get(m.name);
          if (!dir) this.problem(`pod ${pod.metadata.name}: volumeMount ${m.name} names no volume`);
          return dir ? [`${dir}:${m.mountPath}`] : [];
        }),
      };
    };
    for (const init of (spec.initContainers ?? []) as Array<Record<string, unknown>>) {
      const code = await this.node.runToCompletion(planOf(init)).catch(() => -1);
      if (code !== 0) {
        pod.status = { phase: 'Failed', reason: 'Init:Error', message: `init container ${String(init.name)} exited ${code}` };
        this.changed(pod);
        return;
      }
    }
    const container = spec.containers[0] ?? {};
    const image = String(container.image);
    const outcome = await this.node.start(planOf(container));
    if (!this.objects.has(key)) {
      if (outcome.ok) await this.node.remove(outcome.containerId);
      return;
    }
    const name = String(container.name);
    if (!outcome.ok) {
      pod.status = {
        phase: 'Pending',
        containerStatuses: [
          { name, image, ready: false, restartCount: 0, state: { waiting: { reason: outcome.reason, message: outcome.message } } },
        ],
      };
      this.changed(pod);
      return;
    }
    this.containerOf.set(key, outcome.containerId);
    pod.status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name,
          image,
          imageID: image,
          ready: true,
          started: true,
          restartCount: 0,
          containerID: `docker://${outcome.containerId}`,
          state: { running: { startedAt: new Date().toISOString() } },
        },
      ],
    };
    this.changed(pod);
  }

  private reconcileSandbox(sandbox: KubeObject, namespace: string): void {
    const spec = sandbox.spec as { podTemplate?: { metadata?: KubeObject['metadata']; spec: PodSpec }; replicas?: number } | undefined;
    if (!spec?.podTemplate?.spec) {
      this.problem(`sandbox ${sandbox.metadata.name} has no podTemplate.spec`);
      return;
    }
    if (spec.replicas !== undefined && spec.replicas !== 1) this.problem('the fake agent-sandbox controller runs replicas: 1 only');
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: sandbox.metadata.name,
        labels: { ...spec.podTemplate.metadata?.labels, 'agents.x-k8s.io/sandbox-name-hash': 'fake' },
        annotations: spec.podTemplate.metadata?.annotations ?? {},
        ownerReferences: [{ kind: 'Sandbox', name: sandbox.metadata.name, uid: sandbox.metadata.uid ?? '' }],
      },
      spec: structuredClone(spec.podTemplate.spec),
    };
    this.add('Pod', namespace, pod);
    sandbox.status = { replicas: 1, selector: `agents.x-k8s.io/sandbox-name-hash=fake` };
    this.changed(sandbox);
  }

  private async runJob(job: KubeObject, namespace: string): Promise<void> {
    const finish = (ok: boolean, message: string) => {
      job.status = ok
        ? { succeeded: 1, conditions: [{ type: 'Complete', status: 'True', message }] }
        : { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message }] };
      this.changed(job);
    };
    const template = (job.spec as { template?: { spec?: PodSpec } } | undefined)?.template?.spec;
    const container = template?.containers[0] as
      | { env?: Array<{ name: string; value: string }>; securityContext?: { privileged?: boolean }; volumeMounts?: unknown[] }
      | undefined;
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    if (!template || !container) return finish(false, 'the job has no pod template');
    if (env.SANDCAST_ACTION === 'commit') {
      // What a real commit needs: the node that runs the container, and its runtime socket.
      if (template.nodeName !== FAKE_NODE_NAME) return finish(false, `the job is not pinned to ${FAKE_NODE_NAME}`);
      if (container.securityContext?.privileged !== true) return finish(false, 'the runtime socket needs a privileged container');
      const volumes = (template.volumes ?? []) as Array<{ hostPath?: { path: string } }>;
      if (!volumes.some((v) => v.hostPath?.path === env.RUNTIME_SOCKET)) return finish(false, 'the runtime socket is not mounted');
    }
    try {
      if (env.SANDCAST_ACTION === 'commit') {
        const id = String(env.CONTAINER_ID).replace(/^[a-z]+:\/\//, '');
        await this.node.commit(id, String(env.TARGET_REF));
        return finish(true, 'committed and pushed');
      }
      if (env.SANDCAST_ACTION === 'delete') {
        await this.node.removeImage(String(env.TARGET_REF));
        return finish(true, 'deleted');
      }
      this.problem(`job ${job.metadata.name} in ${namespace}: unknown SANDCAST_ACTION ${env.SANDCAST_ACTION}`);
      return finish(false, 'unknown action');
    } catch (error) {
      return finish(false, (error as Error).message);
    }
  }
}

function parseCpu(value: string): number {
  return value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value);
}

function parseMemory(value: string): number {
  const units: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(value);
  if (!match) return Number.NaN;
  return Number(match[1]) * (match[2] ? (units[match[2]] ?? 1) : 1);
}
