import { readFileSync } from 'node:fs';
import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { describe, it } from 'vitest';
import { createKubernetesProvider } from './kubernetes-provider.ts';

/**
 * The conformance suite against a real cluster, opt-in: set KUBECONFIG (and optionally
 * SANDCAST_K8S_NAMESPACE, SANDCAST_K8S_TEST_IMAGE, and SANDCAST_K8S_REGISTRY with
 * SANDCAST_K8S_COMMITTER_IMAGE and SANDCAST_K8S_PUSH_SECRET for capture). No cluster exists in CI,
 * so this skips there too, with the reason printed.
 */
const kubeconfigPath = process.env.KUBECONFIG;

if (!kubeconfigPath) {
  describe('provider conformance: kubernetes (live cluster)', () => {
    it.skip('needs KUBECONFIG naming a cluster to run against; none is set', () => undefined);
  });
  console.warn('[kubernetes live] skipped: KUBECONFIG is not set (no cluster is reachable here)');
} else {
  const registry = process.env.SANDCAST_K8S_REGISTRY;
  const committerImage = process.env.SANDCAST_K8S_COMMITTER_IMAGE;
  describeProviderConformance({
    name: 'kubernetes (live cluster)',
    createProvider: async () =>
      createKubernetesProvider({
        access: { kubeconfig: readFileSync(kubeconfigPath, 'utf8') },
        namespace: process.env.SANDCAST_K8S_NAMESPACE ?? 'sandcast-test',
        installationId: 'live-conformance',
        ...(registry && committerImage
          ? { capture: { registry, committerImage, pushSecretName: process.env.SANDCAST_K8S_PUSH_SECRET } }
          : {}),
      }),
    config: { image: process.env.SANDCAST_K8S_TEST_IMAGE ?? 'docker.io/library/debian:bookworm', cpu: 1, memoryMb: 512 },
    vanish: async (provider, instanceId) => {
      // As an outside `kubectl delete` would; destroy is that same call.
      await provider.destroy(instanceId);
    },
    isolatedRoot: true,
    timeoutMs: 180_000,
  });
}
