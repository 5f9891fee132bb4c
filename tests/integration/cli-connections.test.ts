import { testDatabases } from '@sandcast/db/testing';
import { type FakeDaytona, startFakeDaytona } from '@sandcast/provider-daytona/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandcast } from './support/cli.ts';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('sandcast connection', () => {
  let t: TestServer;
  let fake: FakeDaytona;
  let env: Record<string, string>;
  beforeAll(async () => {
    fake = await startFakeDaytona();
    t = await startTestServer({ database: pglite });
    env = { SANDCAST_URL: t.url, FAKE_DAYTONA_KEY: fake.apiKey };
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('creates, lists, shows, tests and removes a connection; the secret is never printed', async () => {
    const created = await sandcast(
      ['connection', 'create', 'dt', '--provider', 'daytona', '--set', `apiUrl=${fake.apiUrl}`, '--secret-env', 'apiKey=FAKE_DAYTONA_KEY'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('apiKey: (set, never shown)');

    const list = await sandcast(['connection', 'list'], env);
    expect(list.stdout).toMatch(/^dt\s+daytona\s+conn_/m);
    const tested = await sandcast(['connection', 'test', 'dt'], env);
    expect(tested).toMatchObject({ code: 0, stdout: 'connection dt works\n' });

    await sandcast(['connection', 'update', 'dt', '--secret', 'apiKey=wrong'], env);
    const failing = await sandcast(['connection', 'test', 'dt'], env);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('refused the API key (401)');

    const environment = await sandcast(['env', 'create', 'dt-env', '--provider', 'daytona', '--connection', 'dt'], env);
    expect(environment.code, environment.stderr).toBe(0);
    expect(environment.stdout).toMatch(/connection: conn_/);
    const inUse = await sandcast(['connection', 'rm', 'dt'], env);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toContain('dt-env');
    await t.client.environments.delete((await t.client.environments.resolve('dt-env')).id);
    const removed = await sandcast(['connection', 'rm', 'dt'], env);
    expect(removed, removed.stderr).toMatchObject({ code: 0, stdout: 'deleted connection dt\n' });

    const shown = await sandcast(['connection', 'show', 'dt'], env);
    expect(shown.code).toBe(1);
    for (const output of [created, list, tested, failing, environment, inUse, removed]) {
      expect(output.stdout + output.stderr).not.toContain(fake.apiKey);
    }
  });
});
