export type { ClusterAccess } from './cluster.ts';
export type { CaptureSettings, KubernetesConfig } from './config.ts';
export {
  KUBERNETES_RUNTIME_KNOBS,
  kubernetesConfigSchema,
  kubernetesConnectionConfigSchema,
  kubernetesConnectionSecretsSchema,
} from './config.ts';
export { createKubernetesFactory } from './factory.ts';
export type { WorkloadMode } from './instances.ts';
export type { KubernetesProviderOptions } from './kubernetes-provider.ts';
export { createKubernetesProvider } from './kubernetes-provider.ts';
