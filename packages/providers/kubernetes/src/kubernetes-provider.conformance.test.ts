import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { afterAll, expect } from 'vitest';
import { createKubernetesProvider } from './kubernetes-provider.ts';
import { type FakeKubernetes, fakeClusterSkipReason, startFakeKubernetes, TEST_IMAGE } from './testing/index.ts';

for (const agentSandbox of [false, true]) {
  let fake: FakeKubernetes | undefined;
  afterAll(async () => {
    const unhandled = fake?.unhandled ?? [];
    await fake?.close();
    expect(unhandled, 'calls the fake API server does not implement').toEqual([]);
  });
  describeProviderConformance({
    name: agentSandbox ? 'kubernetes (agent-sandbox CRD, fake API server)' : 'kubernetes (pods, fake API server)',
    createProvider: async () => {
      fake = await startFakeKubernetes({ agentSandbox });
      return createKubernetesProvider({
        access: { kubeconfig: fake.kubeconfig },
        namespace: fake.namespace,
        installationId: `conformance-${agentSandbox ? 'crd' : 'pods'}`,
        capture: { registry: 'registry.sandcast.test/conformance', committerImage: 'sandcast/committer:test' },
        pollIntervalMs: 50,
      });
    },
    config: { image: TEST_IMAGE, cpu: 1, memoryMb: 512 },
    skipReason: fakeClusterSkipReason,
    vanish: async (_provider, instanceId) => {
      await fake?.deleteBehindTheBack(agentSandbox ? 'Sandbox' : 'Pod', instanceId);
    },
    isolatedRoot: true,
    timeoutMs: 60_000,
  });
}
