import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb, createStore } from '@sandcast/db';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { startServer } from './server.ts';

const activeHandles = (): Set<unknown> => new Set((process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles());

/** Handles are released from the callbacks of their close events: let those run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** Resolves once a TCP connection to the port is refused (the listener is gone) or accepted. */
const tcpReachable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('server close', () => {
  let dataDir = '';
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves no handle it opened, the SSH gateway and HTTP listeners included, so the process can exit', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-server-close-'));
    await settle();
    const before = activeHandles();
    const server = await startServer(
      loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'silent' }),
      { providers: [createFakeProvider({ dataDir })], store: createStore(await createDb({ pglite: 'memory://' })) },
    );
    const sshPort = server.sshGateway!.port;
    expect(await tcpReachable(sshPort)).toBe(true);
    await settle();
    await server.close();
    await settle();

    const left = [...activeHandles()].filter((handle) => !before.has(handle));
    expect(left.map((handle) => (handle as object).constructor.name)).toEqual([]);
    expect(await tcpReachable(sshPort)).toBe(false);
  });
});
