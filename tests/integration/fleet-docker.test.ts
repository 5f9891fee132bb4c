import { testDatabases } from '@sandcast/db/testing';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { adminOf, runFleetFlow } from './support/fleet-flow.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from './support/lifecycle.ts';

const runnable = requireForSuite('fleet-docker', await dockerSkipReason());
const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;

describe.skipIf(!runnable)(`resource sandboxes on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  let t: TestServer;
  beforeAll(async () => {
    // Two agent keys need an authenticated server.
    t = await startTestServer({ database, mode: 'authenticated', providers: (dataDir) => [createDockerProvider({ dataDir })] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps two sessions of two keys apart, leaves the primary alone, stops and starts, and ends with the session', async () => {
    await runFleetFlow({
      t,
      admin: await adminOf(t),
      provider: t.server.providers.get('docker')!.provider,
      name: 'fleet-docker',
      config: { image: TEST_IMAGE },
    });
  });
});
