import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandcast } from './support/cli.ts';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('sandcast sandbox port and image port', () => {
  let t: TestServer;
  let env: Record<string, string>;
  let sandboxId: string;
  let sessionId: string;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    env = { SANDCAST_URL: t.url };
    await enableEnvironments(t.client);
    const environment = await t.client.environments.create({ name: 'cli-ports', provider: 'fake', config: {} });
    sandboxId = (await t.client.sandboxes.create({ environmentId: environment.id })).id;
    sessionId = (await t.client.customImages.startSetup(environment.id)).session.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('opens, lists, prints the URL of and closes a port', async () => {
    const opened = await sandcast(['sandbox', 'port', 'open', sandboxId, '3000'], env);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toContain(
      `opened port 3000 of ${sandboxId} (private): http://3000-${sandboxId.replace('_', '-')}.sandboxes.localhost:`,
    );

    const list = await sandcast(['sandbox', 'port', 'list', sandboxId], env);
    expect(list.stdout).toMatch(/^3000\s+private\s+http:\/\/3000-sbx-/);

    const url = await sandcast(['sandbox', 'port', 'url', sandboxId, '3000'], env);
    expect(url.stdout.trim()).toMatch(
      /^http:\/\/3000-sbx-[0-9a-f]{32}\.sandboxes\.localhost:\d+\/\?sandcast_token=[0-9a-z]+\.[A-Za-z0-9_-]{43}$/,
    );

    const publicRefused = await sandcast(['sandbox', 'port', 'open', sandboxId, '3001', '--public'], env);
    expect(publicRefused.code).toBe(1);
    expect(publicRefused.stderr).toContain('allowPublicPorts');

    const closed = await sandcast(['sandbox', 'port', 'close', sandboxId, '3000'], env);
    expect(closed.stdout).toContain(`closed port 3000 of ${sandboxId}`);
    expect((await sandcast(['sandbox', 'port', 'list', sandboxId], env)).stdout).toContain('no open ports');
  });

  it('refuses a port outside 1-65535 as a usage mistake (exit 2)', async () => {
    for (const port of ['0', '65536', '1.5', 'http', '-1']) {
      const result = await sandcast(['sandbox', 'port', 'open', sandboxId, port], env);
      expect(result.code, port).toBe(2);
      expect(result.stderr).toContain('1 to 65535');
    }
  });

  it('opens, lists, prints the URL of and closes a port of the running setup, named by its environment or session id', async () => {
    const opened = await sandcast(['image', 'port', 'open', 'cli-ports', '3000'], env);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toContain(`opened port 3000 of setup session ${sessionId} (private): http://3000-setup-`);
    expect(opened.stdout).toContain('sandcast image port url cli-ports 3000');

    const list = await sandcast(['image', 'port', 'list', sessionId], env);
    expect(list.stdout).toMatch(/^3000\s+private\s+http:\/\/3000-setup-[0-9a-f]{32}\./);

    const url = await sandcast(['image', 'port', 'url', 'cli-ports', '3000'], env);
    expect(url.stdout.trim()).toMatch(
      /^http:\/\/3000-setup-[0-9a-f]{32}\.sandboxes\.localhost:\d+\/\?sandcast_token=[0-9a-z]+\.[A-Za-z0-9_-]{43}$/,
    );

    const closed = await sandcast(['image', 'port', 'close', 'cli-ports', '3000', '--json'], env);
    expect(JSON.parse(closed.stdout)).toMatchObject({ sessionId, port: 3000 });
    expect((await sandcast(['image', 'port', 'list', 'cli-ports'], env)).stdout).toContain('no open ports');
  });

  it('refuses a bad port as a usage mistake (exit 2), and an environment with no running setup with its reason', async () => {
    const bad = await sandcast(['image', 'port', 'open', 'cli-ports', '65536'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('1 to 65535');
    await t.client.environments.create({ name: 'cli-no-setup', provider: 'fake', config: {} });
    const none = await sandcast(['image', 'port', 'list', 'cli-no-setup'], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('sandcast image setup cli-no-setup');
  });
});
