export { FAKE_DEFAULT_IMAGE, fakeDaytonaSkipReason } from './docker-cli.ts';
export type { FakeDaytona } from './fake-daytona.ts';
export { startFakeDaytona } from './fake-daytona.ts';
