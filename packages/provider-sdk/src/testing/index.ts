export type { ConformanceOptions } from './conformance.ts';
export { describeProviderConformance, waitForPtyOutput } from './conformance.ts';
