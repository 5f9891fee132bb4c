import { createHash } from 'node:crypto';
import { type ProviderConnection, ProviderError } from '@sandcast/provider-sdk';
import { kubernetesConnectionConfigSchema, kubernetesConnectionSecretsSchema, PROVIDER_ID } from './config.ts';
import type { KubernetesProviderOptions } from './kubernetes-provider.ts';

function invalid(message: string): ProviderError {
  return new ProviderError({ provider: PROVIDER_ID, code: 'invalid_config', message });
}

/**
 * The provider options one connection stands for. Its objects are labelled with a hash of the
 * connection id, so two connections to one namespace never collect each other's sandboxes.
 */
export function providerOptionsOf(connection: ProviderConnection): KubernetesProviderOptions {
  const config = kubernetesConnectionConfigSchema.safeParse(connection.config);
  if (!config.success)
    throw invalid(`invalid Kubernetes connection: ${config.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const secrets = kubernetesConnectionSecretsSchema.safeParse(connection.secrets);
  if (!secrets.success) throw invalid(`invalid Kubernetes connection kubeconfig: ${secrets.error.issues.map((i) => i.message).join('; ')}`);
  const settings = config.data;
  const kubeconfig = secrets.data.kubeconfig;
  if (!settings.inCluster && !kubeconfig)
    throw invalid('the connection needs a kubeconfig, or inCluster: true when Sandcast runs in the cluster');
  if (settings.captureRegistry && !settings.committerImage) {
    throw invalid('captureRegistry needs committerImage: an image with nerdctl and skopeo for the committer Job');
  }
  return {
    access: settings.inCluster ? { inCluster: true } : { kubeconfig: kubeconfig as string, context: settings.context },
    namespace: settings.namespace,
    installationId: `c${createHash('sha256').update(connection.id).digest('hex').slice(0, 20)}`,
    workloads: settings.workloads,
    capture:
      settings.captureRegistry && settings.committerImage
        ? {
            registry: settings.captureRegistry,
            committerImage: settings.committerImage,
            runtimeSocket: settings.runtimeSocket,
            pushSecretName: settings.pushSecretName,
            pullSecretName: settings.pullSecretName,
          }
        : undefined,
  };
}
