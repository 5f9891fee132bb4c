import { randomBytes } from 'node:crypto';
import type { V1Job, V1PodSpec } from '@kubernetes/client-node';
import { type CaptureRequest, ProviderError, type TemplateRef } from '@sandcast/provider-sdk';
import { type Cluster, call, callOrNull } from './cluster.ts';
import { type CaptureSettings, DEFAULT_RUNTIME_SOCKET, PROVIDER_ID } from './config.ts';
import type { Instances } from './instances.ts';
import { LABEL, MANAGED_BY } from './manifests.ts';
import { awaitObject } from './watch.ts';

const DEFAULT_JOB_TIMEOUT_MS = 600_000;
const REGISTRY_AUTH_DIR = '/sandcast/registry';

/**
 * What the committer Job runs on the setup pod's node: commit the running container through the
 * node's containerd (in the kubelet's `k8s.io` namespace) and push it to the connection's registry.
 */
const COMMIT_SCRIPT = [
  'set -eu',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for the Job's shell
  'id="${CONTAINER_ID#*://}"',
  'nerdctl --address "$RUNTIME_SOCKET" --namespace k8s.io commit "$id" "$TARGET_REF"',
  'nerdctl --address "$RUNTIME_SOCKET" --namespace k8s.io push "$TARGET_REF"',
  'nerdctl --address "$RUNTIME_SOCKET" --namespace k8s.io image rm "$TARGET_REF" >/dev/null 2>&1 || true',
].join('\n');

/** What the delete Job runs: remove the manifest from the registry (no node, no privilege). */
const DELETE_SCRIPT = ['set -eu', 'skopeo delete --authfile "$DOCKER_CONFIG/config.json" "docker://$TARGET_REF"'].join('\n');

/** A deleted-already answer from a registry or runtime: the artefact is gone, which is what was asked. */
const ALREADY_GONE = /manifest unknown|not found|no such image|MANIFEST_UNKNOWN/i;

function tagSafe(value: string): string {
  return (
    value
      .toLowerCase()
      .replace(/[^a-z0-9_.-]/g, '-')
      .slice(0, 120) || 'x'
  );
}

export interface CaptureContext {
  cluster: Cluster;
  instances: Instances;
  settings: CaptureSettings;
  installation: string;
  pollIntervalMs: number;
}

function jobFor(context: CaptureContext, action: 'commit' | 'delete', env: Record<string, string>, node: string | undefined): V1Job {
  const { settings } = context;
  const socket = settings.runtimeSocket ?? DEFAULT_RUNTIME_SOCKET;
  const name = `sandcast-${action}-${randomBytes(6).toString('hex')}`;
  const commit = action === 'commit';
  const volumes: NonNullable<V1PodSpec['volumes']> = [];
  const mounts: Array<{ name: string; mountPath: string; readOnly?: boolean }> = [];
  if (commit) {
    volumes.push({ name: 'runtime', hostPath: { path: socket, type: 'Socket' } });
    mounts.push({ name: 'runtime', mountPath: socket });
  }
  if (settings.pushSecretName) {
    volumes.push({
      name: 'registry',
      secret: { secretName: settings.pushSecretName, items: [{ key: '.dockerconfigjson', path: 'config.json' }] },
    });
    mounts.push({ name: 'registry', mountPath: REGISTRY_AUTH_DIR, readOnly: true });
  }
  const allEnv = { ...env, SANDCAST_ACTION: action, RUNTIME_SOCKET: socket, DOCKER_CONFIG: REGISTRY_AUTH_DIR };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: { [LABEL.managedBy]: MANAGED_BY, [LABEL.installation]: context.installation, 'sandcast.dev/job': action } },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: 600,
      activeDeadlineSeconds: Math.ceil((settings.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS) / 1000),
      template: {
        metadata: { labels: { [LABEL.managedBy]: MANAGED_BY, 'sandcast.dev/job': action } },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          // The commit must run where the container is: on the setup pod's node.
          ...(commit && node ? { nodeName: node } : {}),
          containers: [
            {
              name: action,
              image: settings.committerImage,
              command: ['/bin/sh', '-c', commit ? COMMIT_SCRIPT : DELETE_SCRIPT],
              env: Object.entries(allEnv).map(([key, value]) => ({ name: key, value })),
              securityContext: commit ? { privileged: true } : { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: mounts,
            },
          ],
          volumes,
        },
      },
    },
  };
}

/** Runs a Job to its end and removes it; answers its failure message, or null on success. */
async function runJob(context: CaptureContext, job: V1Job): Promise<string | null> {
  const { cluster } = context;
  const namespace = cluster.namespace;
  const name = job.metadata?.name ?? '';
  await call(cluster, `create Job ${name}`, () => cluster.batch.createNamespacedJob({ namespace, body: job }));
  const timeoutMs = context.settings.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  try {
    const outcome = await awaitObject<V1Job, { failure: string | null }>(cluster, {
      path: `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/jobs`,
      name,
      read: () => callOrNull(cluster, `read Job ${name}`, () => cluster.batch.readNamespacedJob({ name, namespace })),
      decide: (current) => {
        if (current === null) return { failure: `Job ${name} disappeared before it finished` };
        const conditions = current.status?.conditions ?? [];
        if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return { failure: null };
        const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
        return failed ? { failure: failed.message ?? failed.reason ?? 'the Job failed' } : undefined;
      },
      timeoutMs,
      pollIntervalMs: context.pollIntervalMs,
      onTimeout: () => new Error(`Job ${name} did not finish in time (kubectl logs job/${name})`),
    }).catch((error: unknown) => ({ failure: (error as Error).message }));
    return outcome.failure;
  } finally {
    await callOrNull(cluster, `delete Job ${name}`, () =>
      cluster.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' }),
    ).catch(() => undefined);
  }
}

/** Commits the setup pod's container on its node and pushes it; the pushed reference is the template. */
export async function captureImage(context: CaptureContext, request: CaptureRequest): Promise<TemplateRef> {
  const pod = await context.instances.livePod(request.leaseId);
  if (pod?.metadata?.labels?.[LABEL.ownerKind] !== 'setup') {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_found',
      message: `setup sandbox ${request.leaseId} does not exist any more; start a new setup`,
    });
  }
  const containerId = pod.status?.containerStatuses?.[0]?.containerID;
  const node = pod.spec?.nodeName;
  if (!containerId || !node) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_running',
      message: `setup sandbox ${request.leaseId} is not running on a node; start a new setup`,
    });
  }
  const ref = `${context.settings.registry.replace(/\/$/, '')}/env-${tagSafe(request.environmentId)}:${tagSafe(request.setupSessionId)}`;
  request.onProgress?.({ phase: 'committing' });
  const failure = await runJob(context, jobFor(context, 'commit', { CONTAINER_ID: containerId, TARGET_REF: ref }, node));
  if (failure !== null) {
    throw new ProviderError({ provider: PROVIDER_ID, code: 'capture_failed', message: `the committer Job on ${node} failed: ${failure}` });
  }
  request.onProgress?.({ phase: 'pushed', fraction: 1 });
  return { kind: 'image', ref, metadata: { node, setupSessionId: request.setupSessionId } };
}

/** Deletes a captured image from the registry; an image already gone is deleted. */
export async function deleteImage(context: CaptureContext, template: TemplateRef): Promise<void> {
  const failure = await runJob(context, jobFor(context, 'delete', { TARGET_REF: template.ref }, undefined));
  if (failure !== null && !ALREADY_GONE.test(failure)) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'backend',
      message: `could not delete ${template.ref} from the registry: ${failure}`,
    });
  }
}
