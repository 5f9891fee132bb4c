import {
  ApiException,
  ApisApi,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  VersionApi,
} from '@kubernetes/client-node';
import { ProviderError, type ProviderErrorCode } from '@sandcast/provider-sdk';
import { PROVIDER_ID } from './config.ts';
import { kubeconfigIssues } from './kubeconfig.ts';

/** How the provider reaches its cluster: a kubeconfig (a secret of the connection) or the pod's own service account. */
export type ClusterAccess = { kubeconfig: string; context?: string | undefined } | { inCluster: true };

/** The agent-sandbox CRD the provider prefers when the cluster serves it. */
export const AGENT_SANDBOX = { group: 'agents.x-k8s.io', version: 'v1alpha1', plural: 'sandboxes', kind: 'Sandbox' } as const;

/** The API clients one connection uses, all built from one KubeConfig. */
export interface Cluster {
  readonly config: KubeConfig;
  readonly namespace: string;
  readonly core: CoreV1Api;
  readonly networking: NetworkingV1Api;
  readonly batch: BatchV1Api;
  readonly custom: CustomObjectsApi;
  readonly apis: ApisApi;
  readonly version: VersionApi;
  /** The server's URL, for messages. */
  readonly server: string;
}

export function connectCluster(access: ClusterAccess, namespace: string): Cluster {
  const config = new KubeConfig();
  if ('inCluster' in access) config.loadFromCluster();
  else {
    // Checked before loading: loading alone reads a token-file.
    const issues = kubeconfigIssues(access.kubeconfig);
    if (issues.length > 0) {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'invalid_config',
        message: `the kubeconfig cannot be used: ${issues.join('; ')}`,
      });
    }
    config.loadFromString(access.kubeconfig);
    if (access.context) config.setCurrentContext(access.context);
  }
  const server = config.getCurrentCluster()?.server;
  if (!server) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'invalid_config',
      message: 'the kubeconfig names no cluster for its current context',
    });
  }
  return {
    config,
    namespace,
    server,
    core: config.makeApiClient(CoreV1Api),
    networking: config.makeApiClient(NetworkingV1Api),
    batch: config.makeApiClient(BatchV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    apis: config.makeApiClient(ApisApi),
    version: config.makeApiClient(VersionApi),
  };
}

function statusCodeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

function apiMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as unknown;
    if (typeof body === 'string') {
      try {
        const parsed = JSON.parse(body) as { message?: string };
        if (parsed.message) return parsed.message;
      } catch {
        return body.slice(0, 300);
      }
    }
    if (body && typeof body === 'object' && 'message' in body) return String((body as { message: unknown }).message);
    return `HTTP ${error.code}`;
  }
  return error instanceof Error ? error.message : String(error);
}

const CODE_BY_STATUS: Record<number, ProviderErrorCode> = { 404: 'not_found', 409: 'in_use', 422: 'invalid_config', 400: 'invalid_config' };

/** A failed API call, in the operator's words: what was attempted, where, and what the API server said. */
export function toProviderError(error: unknown, context: { action: string; cluster: Cluster }): ProviderError {
  if (error instanceof ProviderError) return error;
  const status = statusCodeOf(error);
  const message = apiMessage(error);
  if (status === 401 || status === 403) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'unavailable',
      message: `the cluster at ${context.cluster.server} refused to ${context.action} (${message}); grant the role in docs/deploy/kubernetes.md to the provider's credentials`,
      cause: error,
    });
  }
  if (status === undefined) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'unavailable',
      retryable: true,
      message: `could not reach the cluster at ${context.cluster.server} to ${context.action}: ${message}`,
      cause: error,
    });
  }
  return new ProviderError({
    provider: PROVIDER_ID,
    code: CODE_BY_STATUS[status] ?? 'backend',
    retryable: status >= 500,
    message: `could not ${context.action}: ${message}`,
    cause: error,
  });
}

/** Runs an API call, turning its failure into a ProviderError. */
export async function call<T>(cluster: Cluster, action: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toProviderError(error, { action, cluster });
  }
}

/** An API call whose 404 is an answer (the object is gone), not a fault. */
export async function callOrNull<T>(cluster: Cluster, action: string, run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    if (statusCodeOf(error) === 404) return null;
    throw toProviderError(error, { action, cluster });
  }
}

/** Whether the cluster serves the agent-sandbox `Sandbox` resource (API discovery). */
export async function servesAgentSandbox(cluster: Cluster): Promise<boolean> {
  const groups = await call(cluster, 'discover the API groups', () => cluster.apis.getAPIVersions());
  return groups.groups.some((g) => g.name === AGENT_SANDBOX.group && g.versions.some((v) => v.version === AGENT_SANDBOX.version));
}
