import type { V1NetworkPolicy, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { ManagedInstance, TemplateRef } from '@sandcast/provider-sdk';
import { AGENT_SANDBOX } from './cluster.ts';
import { DEFAULT_CPU, DEFAULT_MEMORY_MB, type KubernetesConfig, WORKDIR } from './config.ts';

/**
 * Labels on everything the provider creates. Garbage collection lists only objects with the
 * managed-by label and this installation's id; nothing else in the namespace is touched.
 */
export const LABEL = {
  managedBy: 'app.kubernetes.io/managed-by',
  installation: 'sandcast.dev/installation',
  ownerKind: 'sandcast.dev/owner-kind',
  /** The instance name; the network policy selects the pod by it. */
  instance: 'sandcast.dev/instance',
} as const;

/** Annotations carry what label values cannot hold (ids of any shape). */
export const ANNOTATION = {
  ownerId: 'sandcast.dev/owner-id',
  environmentId: 'sandcast.dev/environment-id',
} as const;

export const MANAGED_BY = 'sandcast';
/** The container every sandbox pod runs; exec names it. */
export const CONTAINER = 'sandbox';

/** PID 1 of a sandbox: waits for nothing, ends at once on TERM, reaps nothing it did not start. */
const KEEPALIVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

export interface Owner {
  kind: ManagedInstance['ownerKind'];
  id: string;
  environmentId: string;
  installation: string;
}

export function selectorFor(installation: string, kind?: ManagedInstance['ownerKind']): string {
  const parts = [`${LABEL.managedBy}=${MANAGED_BY}`, `${LABEL.installation}=${installation}`];
  if (kind) parts.push(`${LABEL.ownerKind}=${kind}`);
  return parts.join(',');
}

function labelsFor(name: string, owner: Owner): Record<string, string> {
  return { [LABEL.managedBy]: MANAGED_BY, [LABEL.installation]: owner.installation, [LABEL.ownerKind]: owner.kind, [LABEL.instance]: name };
}

function annotationsFor(owner: Owner): Record<string, string> {
  return { [ANNOTATION.ownerId]: owner.id, [ANNOTATION.environmentId]: owner.environmentId };
}

export interface PodPlan {
  name: string;
  owner: Owner;
  config: KubernetesConfig;
  template: TemplateRef | null | undefined;
  /** Pods booting from a capture pull it with this secret. */
  pullSecretName?: string | undefined;
  /** A setup sandbox ends by itself after its TTL. */
  ttlSeconds?: number | undefined;
}

/**
 * The sandbox pod: one container, no service account token, no service links, every capability
 * dropped, no privilege escalation, the runtime's default seccomp profile, limits equal to
 * requests, and the RuntimeClass the environment names (gVisor, Kata) when it names one.
 */
function podSpecFor(plan: PodPlan): V1PodSpec {
  const { config } = plan;
  const cpu = String(config.cpu ?? DEFAULT_CPU);
  const memory = `${config.memoryMb ?? DEFAULT_MEMORY_MB}Mi`;
  const nonRoot = config.runAsUser !== undefined;
  // A capture commits the root, so a setup sandbox always has a writable one.
  const readOnlyRoot = config.readOnlyRootFilesystem === true && plan.owner.kind === 'sandbox';
  const image = plan.template ? plan.template.ref : config.image;
  // A deleted capture must not boot from a node's cache.
  const imagePullPolicy = plan.template ? 'Always' : 'IfNotPresent';
  const resources = { limits: { cpu, memory }, requests: { cpu, memory } };
  const securityContext = {
    privileged: false,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
    readOnlyRootFilesystem: readOnlyRoot,
    ...(nonRoot ? { runAsNonRoot: true } : {}),
  };
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    restartPolicy: 'Never',
    terminationGracePeriodSeconds: 1,
    ...(config.runtimeClassName ? { runtimeClassName: config.runtimeClassName } : {}),
    ...(plan.ttlSeconds ? { activeDeadlineSeconds: plan.ttlSeconds } : {}),
    ...(plan.template && plan.pullSecretName ? { imagePullSecrets: [{ name: plan.pullSecretName }] } : {}),
    securityContext: {
      seccompProfile: { type: 'RuntimeDefault' },
      ...(nonRoot ? { runAsNonRoot: true, runAsUser: config.runAsUser, runAsGroup: config.runAsUser, fsGroup: config.runAsUser } : {}),
    },
    ...(readOnlyRoot
      ? {
          volumes: [
            { name: 'workspace', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
          // The workspace volume starts with what the image (or capture) has there.
          initContainers: [
            {
              name: 'seed-workspace',
              image,
              imagePullPolicy,
              command: ['/bin/sh', '-c', `cp -a ${WORKDIR}/. /seed/ 2>/dev/null || true`],
              resources,
              securityContext,
              volumeMounts: [{ name: 'workspace', mountPath: '/seed' }],
            },
          ],
        }
      : {}),
    containers: [
      {
        name: CONTAINER,
        image,
        imagePullPolicy,
        command: ['/bin/sh', '-c', KEEPALIVE],
        workingDir: WORKDIR,
        env: Object.entries(config.env ?? {}).map(([name, value]) => ({ name, value })),
        resources,
        // The root stays writable unless the environment asks otherwise: agents install tools there.
        securityContext,
        ...(readOnlyRoot
          ? {
              volumeMounts: [
                { name: 'workspace', mountPath: WORKDIR },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            }
          : {}),
      },
    ],
  };
}

export function podFor(plan: PodPlan): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: plan.name, labels: labelsFor(plan.name, plan.owner), annotations: annotationsFor(plan.owner) },
    spec: podSpecFor(plan),
  };
}

/** An agent-sandbox `Sandbox` whose controller runs the same pod under the same name. */
export function sandboxFor(plan: PodPlan): Record<string, unknown> {
  const labels = labelsFor(plan.name, plan.owner);
  const annotations = annotationsFor(plan.owner);
  return {
    apiVersion: `${AGENT_SANDBOX.group}/${AGENT_SANDBOX.version}`,
    kind: AGENT_SANDBOX.kind,
    metadata: { name: plan.name, labels, annotations },
    spec: {
      podTemplate: { metadata: { labels, annotations }, spec: podSpecFor({ ...plan, ttlSeconds: undefined }) },
      ...(plan.ttlSeconds ? { shutdownTime: new Date(Date.now() + plan.ttlSeconds * 1000).toISOString(), shutdownPolicy: 'Delete' } : {}),
    },
  };
}

/** Denies every connection in and out of the one pod it selects (DNS included). */
export function networkPolicyFor(name: string, owner: Owner): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, labels: labelsFor(name, owner), annotations: annotationsFor(owner) },
    spec: { podSelector: { matchLabels: { [LABEL.instance]: name } }, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] },
  };
}
