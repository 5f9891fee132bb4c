import { secret } from '@sandcast/provider-sdk';
import { z } from 'zod';
import { kubeconfigIssues } from './kubeconfig.ts';

export const PROVIDER_ID = 'kubernetes';

/** Where every sandbox starts and where workspace export/import apply. */
export const WORKDIR = '/workspace';

const IMAGE_HINT = 'the container image sandboxes boot from, e.g. docker.io/library/debian:bookworm (the cluster pulls it)';

/** Environment config of the Kubernetes provider, as the UI form shows it. */
export const kubernetesConfigSchema = z.strictObject({
  /** The image the sandbox pod runs. Part of the boot source. */
  image: z
    .string({ error: (issue) => (issue.input === undefined ? `required — ${IMAGE_HINT}` : `must be a string — ${IMAGE_HINT}`) })
    .trim()
    .min(1, `must not be empty — ${IMAGE_HINT}`),
  /** CPU limit (and request) in cores. Default 1. Runtime knob. */
  cpu: z.number().positive().max(256).optional(),
  /** Memory limit (and request) in MiB. Default 1024. Runtime knob. */
  memoryMb: z.number().int().min(16).optional(),
  /** A RuntimeClass the cluster defines (gVisor `gvisor`, Kata `kata`). Default: the cluster's default runtime. Runtime knob. */
  runtimeClassName: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a RuntimeClass name (kubectl get runtimeclass)')
    .max(253)
    .optional(),
  /**
   * Run as this non-root uid, with runAsNonRoot enforced by the kubelet. Default: the image's own
   * user (most base images are root; every capability is dropped either way).
   */
  runAsUser: z.number().int().min(1).max(2_147_483_647).optional(),
  /**
   * Mount the image's root read-only in sandboxes; `/workspace` (seeded from the image's) and
   * `/tmp` are then pod-local volumes. Setup sandboxes keep a writable root: a capture commits it.
   */
  readOnlyRootFilesystem: z.boolean().optional(),
  /** Environment variables set in every sandbox process. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
});

export type KubernetesConfig = z.infer<typeof kubernetesConfigSchema>;

/** Config fields that only tune the runtime; changing them keeps captured images valid. */
export const KUBERNETES_RUNTIME_KNOBS = ['cpu', 'memoryMb', 'runtimeClassName'] as const;

export const DEFAULT_CPU = 1;
export const DEFAULT_MEMORY_MB = 1024;

/** How captures reach the registry: the connection names it, and what runs the commit on the node. */
export interface CaptureSettings {
  /** Repository prefix captured images are pushed under, e.g. `registry.example.com/sandcast`. */
  registry: string;
  /** The committer Job's image: has `nerdctl` (commit, push) and `skopeo` (delete). */
  committerImage: string;
  /** The container runtime socket on the nodes. Default /run/containerd/containerd.sock. */
  runtimeSocket?: string | undefined;
  /** A `kubernetes.io/dockerconfigjson` Secret in the namespace with push (and delete) rights. */
  pushSecretName?: string | undefined;
  /** A pull secret pods booting from a capture use. Default: the push secret. */
  pullSecretName?: string | undefined;
  /** How long a commit or delete Job may take. Default 600 s. */
  jobTimeoutMs?: number | undefined;
}

export const DEFAULT_RUNTIME_SOCKET = '/run/containerd/containerd.sock';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The non-secret half of a Kubernetes connection: where sandboxes go and where captures are pushed. */
export const kubernetesConnectionConfigSchema = z.strictObject({
  namespace: z
    .string()
    .max(63)
    .regex(DNS_LABEL, 'must be a namespace name (lowercase letters, digits, dashes)')
    .describe('The namespace sandboxes, their network policies and the committer Jobs live in'),
  inCluster: z.boolean().default(false).describe("Use the Sandcast server's own service account instead of a kubeconfig"),
  context: z.string().min(1).max(253).optional().describe('A context of the kubeconfig; default: its current-context'),
  workloads: z
    .enum(['auto', 'pods', 'agent-sandbox'])
    .default('auto')
    .describe('auto: agent-sandbox Sandboxes when the cluster serves the CRD, else pods'),
  captureRegistry: z
    .string()
    .max(255)
    .regex(/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)*$/, 'must be a registry and repository prefix, e.g. registry.example.com/sandcast')
    .optional()
    .describe('Where captured images are pushed; unset: no capture'),
  committerImage: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe('The committer Job image (nerdctl and skopeo); needed with captureRegistry'),
  runtimeSocket: z
    .string()
    .startsWith('/')
    .max(512)
    .optional()
    .describe("containerd's socket on the nodes; default /run/containerd/containerd.sock"),
  pushSecretName: z
    .string()
    .max(253)
    .regex(DNS_LABEL)
    .optional()
    .describe('A dockerconfigjson Secret in the namespace that may push and delete'),
  pullSecretName: z
    .string()
    .max(253)
    .regex(DNS_LABEL)
    .optional()
    .describe('The pull secret of pods booting from a capture; default: the push secret'),
});

/** The secret half: the kubeconfig, stored encrypted and never returned. */
export const kubernetesConnectionSecretsSchema = z.strictObject({
  kubeconfig: secret(
    z
      .string()
      .min(1)
      .max(1024 * 1024)
      .superRefine((text, ctx) => {
        for (const issue of kubeconfigIssues(text)) ctx.addIssue({ code: 'custom', message: issue });
      })
      .describe('A kubeconfig (YAML) for the cluster, credentials inline; not needed in-cluster'),
  ).optional(),
});
