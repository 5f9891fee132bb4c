export type { TestNetwork } from './egress/testing/test-network.ts';
export { createTestNetwork, testNetworkSkipReason } from './egress/testing/test-network.ts';
