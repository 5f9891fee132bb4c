export type { FakeConfig } from './config.ts';
export { fakeConfigSchema } from './config.ts';
export type { FakeProvider, FakeProviderOptions } from './fake-provider.ts';
export { createFakeProvider, FAKE_CAPABILITIES } from './fake-provider.ts';
