import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFakeProvider } from '@sandcast/provider-fake';
import { type ConnectedProviderFactory, isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConnectionRouter } from './connection-router.ts';
import type { ConnectionSource, OpenConnection } from './connection-source.ts';

/** A connected provider whose accounts are fake providers, one data directory per connection. */
function fakeFactory(root: string, built: string[]): ConnectedProviderFactory {
  const probe = createFakeProvider({ dataDir: root });
  return {
    id: 'acme',
    displayName: 'Acme',
    configSchema: probe.configSchema,
    capabilities: probe.capabilities,
    runtimeKnobs: probe.runtimeKnobs,
    connectionSchema: { config: z.object({}), secrets: z.object({ key: z.string() }) },
    connect: (connection) => {
      built.push(`${connection.id}:${String(connection.secrets.key)}`);
      if (connection.secrets.key === 'broken') {
        return { ...probe, listInstances: async () => Promise.reject(new Error('refused')) } as SandboxProvider;
      }
      return createFakeProvider({ dataDir: path.join(root, connection.id) });
    },
    testConnection: async () => ({ ok: true }),
  };
}

describe('the connection router', () => {
  let root: string;
  const connections = new Map<string, OpenConnection>();
  const environments = new Map<string, string>();
  const source: ConnectionSource = {
    get: async (id) => connections.get(id) ?? null,
    list: async () => [...connections.values()],
    connectionOfEnvironment: async (id) => environments.get(id) ?? null,
  };
  const built: string[] = [];
  let router: SandboxProvider;
  const add = (id: string, key: string, version = '1') =>
    connections.set(id, { id, provider: 'acme', config: {}, secrets: { key }, version });

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'sandcast-router-'));
    router = createConnectionRouter(fakeFactory(root, built), { source, context: { dataDir: root } });
  });
  afterAll(async () => {
    await router.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it('is unavailable, saying "no connection", until one exists', async () => {
    expect(await router.availability()).toMatchObject({ available: false, reason: expect.stringMatching(/^no connection/) });
    add('conn_a', 'a');
    expect(await router.availability()).toEqual({ available: true });
  });

  it("creates in the environment's connection and routes every later call by the id it handed out", async () => {
    add('conn_b', 'b');
    environments.set('env_a', 'conn_a');
    environments.set('env_b', 'conn_b');
    const a = await router.create({ sandboxId: 'sbx-a', environmentId: 'env_a', config: {} });
    const b = await router.create({ sandboxId: 'sbx-b', environmentId: 'env_b', config: {} });
    expect(a.instanceId).toMatch(/^conn_a~/);
    expect(b.instanceId).toMatch(/^conn_b~/);
    expect((await router.exec(a.instanceId, { command: ['sh', '-c', 'echo hi'] })).stdout).toBe('hi\n');
    // The environment moves: the sandbox stays reachable in the account it was made in.
    environments.set('env_a', 'conn_b');
    expect((await router.inspect(a.instanceId)).status).toBe('running');
    expect((await router.listInstances()).map((i) => i.instanceId).sort()).toEqual([a.instanceId, b.instanceId].sort());
    expect((await router.inspect('no-separator')).status).toBe('missing');
    await router.destroy(a.instanceId);
    await router.destroy(b.instanceId);
  });

  it('refuses an environment without a connection, and a template made in another account', async () => {
    const none = await router.create({ sandboxId: 's', environmentId: 'env_none', config: {} }).catch((e: unknown) => e);
    expect(isProviderError(none) && none.message).toMatch(/names no Acme connection/);
    const foreign = await router
      .create({ sandboxId: 's', environmentId: 'env_b', config: {}, template: { kind: 'snapshot', ref: 'conn_a~tpl' } })
      .catch((e: unknown) => e);
    expect(isProviderError(foreign) && foreign.code).toBe('not_found');
  });

  it('rebuilds a connection’s provider when the connection is edited', async () => {
    environments.set('env_a', 'conn_a');
    const before = built.filter((b) => b.startsWith('conn_a')).length;
    add('conn_a', 'a2', '2');
    const created = await router.create({ sandboxId: 'sbx-c', environmentId: 'env_a', config: {} });
    expect(built.filter((b) => b.startsWith('conn_a'))).toHaveLength(before + 1);
    expect(built).toContain('conn_a:a2');
    await router.destroy(created.instanceId);
  });

  it('one connection that cannot list does not hide the others; all failing is an error', async () => {
    add('conn_broken', 'broken');
    await expect(router.listInstances()).resolves.toEqual([]);
    connections.clear();
    add('conn_broken', 'broken');
    await expect(router.listInstances()).rejects.toThrow('refused');
  });
});
