import { isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaProvider } from './daytona-provider.ts';
import { createDaytonaFactory } from './factory.ts';
import { type FakeDaytona, fakeDaytonaSkipReason, startFakeDaytona } from './testing/index.ts';

const skip = await fakeDaytonaSkipReason();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the Daytona fake cannot run sandboxes: ${skip}`);
if (skip) console.warn(`[daytona-provider] skipped: ${skip}`);

/** Runs one command over SSH, authenticating the way Daytona's payload says: the token is the user name. */
function sshExec(host: string, port: number, username: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    client
      .on('ready', () => {
        client.exec(command, (error, stream) => {
          if (error) return reject(error);
          let out = '';
          stream.on('data', (d: Buffer) => {
            out += d.toString('utf8');
          });
          stream.on('close', () => {
            client.end();
            resolve(out);
          });
        });
      })
      .on('error', reject)
      .connect({ host, port, username, readyTimeout: 10_000 });
  });
}

describe.skipIf(skip !== null)('the Daytona provider against the local fake', () => {
  let fake: FakeDaytona;
  let provider: SandboxProvider;
  beforeAll(async () => {
    fake = await startFakeDaytona();
    provider = createDaytonaProvider({ apiUrl: fake.apiUrl, apiKey: fake.apiKey });
  });
  afterAll(async () => {
    await provider?.close?.();
    await fake?.close();
  });

  it('stops and starts a sandbox over the same disk; a stopped one refuses commands', async () => {
    const { instanceId } = await provider.create({ sandboxId: 'sbx_stop', environmentId: 'env', config: { autoStopMinutes: 5 } });
    await provider.exec(instanceId, { command: ['sh', '-c', 'echo kept > kept.txt'] });
    await provider.stop!(instanceId);
    await provider.stop!(instanceId);
    expect((await provider.inspect(instanceId)).status).toBe('stopped');
    const refused = await provider.exec(instanceId, { command: ['true'] }).catch((e: unknown) => e);
    expect(isProviderError(refused) && refused.code).toBe('not_running');
    await provider.start!(instanceId);
    expect((await provider.inspect(instanceId)).status).toBe('running');
    expect((await provider.exec(instanceId, { command: ['cat', 'kept.txt'] })).stdout).toBe('kept\n');
    // The intervals reached Daytona as asked.
    expect([...fake.sandboxes.values()].find((s) => s.id === instanceId)).toMatchObject({
      autoStopInterval: 5,
      autoArchiveInterval: 10_080,
      autoDeleteInterval: -1,
      labels: { 'sandcast.owner-id': 'sbx_stop', 'sandcast.owner-kind': 'sandbox' },
    });
    await provider.archive!(instanceId);
    expect(fake.sandboxes.get(instanceId)?.state).toBe('archived');
    await provider.destroy(instanceId);
  });

  it('opens a setup session over Daytona SSH access, the credential in the user name', async () => {
    const lease = await provider.startInteractiveSetup({
      setupSessionId: 'setup_ssh',
      environmentId: 'env',
      config: {},
      source: null,
      ttlSeconds: 600,
    });
    const connection = lease.connection;
    if (connection.type !== 'ssh') throw new Error('expected an SSH connection');
    expect(connection.command).toBe(`ssh ${connection.username}@${connection.host} -p ${connection.port}`);
    expect(await sshExec(connection.host, connection.port, connection.username, 'echo over-ssh; pwd')).toBe('over-ssh\n/\n');
    await expect(sshExec(connection.host, connection.port, 'not-a-token', 'true')).rejects.toThrow();
    await provider.cancelInteractiveSetup(lease.leaseId);
  });

  it('a refused key reads as unavailable with a reason to act on; the connection test says the same', async () => {
    const wrong = createDaytonaProvider({ apiUrl: fake.apiUrl, apiKey: 'wrong' });
    expect(await wrong.availability()).toEqual({ available: false, reason: expect.stringContaining('refused the API key (401)') });
    const test = await createDaytonaFactory().testConnection({ id: 'c', config: { apiUrl: fake.apiUrl }, secrets: { apiKey: 'wrong' } });
    expect(test).toMatchObject({ ok: false, reason: expect.stringContaining('401') });
    const unreachable = await createDaytonaFactory().testConnection({
      id: 'c',
      config: { apiUrl: 'http://127.0.0.1:9/api' },
      secrets: { apiKey: 'k' },
    });
    expect(unreachable).toMatchObject({ ok: false, reason: expect.stringContaining('could not be reached') });
  });

  it('called nothing the fake does not implement', () => {
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.unhandled).toEqual([]);
  });
});
