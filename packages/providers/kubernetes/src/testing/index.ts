export type { FakeCall, FakeKubernetes, FakeKubernetesOptions } from './fake-api-server.ts';
export { startFakeKubernetes } from './fake-api-server.ts';
export type { KubeObject } from './fake-cluster.ts';
export { fakeClusterSkipReason, TEST_IMAGE } from './skip.ts';
