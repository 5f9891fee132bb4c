import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { beforeAll, describe, it } from 'vitest';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runSessionFlow } from './support/session-flow.ts';

const runnable = requireForSuite('sessions-local', await localSkipReason());

describe.skipIf(!runnable)(`a session on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });

  it('starts (compute and bootstrap), runs commands, moves files both ways, ends with the compute gone', async () => {
    await runSessionFlow({ client: t.client, provider: t.server.providers.get('local')!.provider, name: 'session-local', config: {} });
  });
});
