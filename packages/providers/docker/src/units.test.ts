import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { repositoryFor, shortSessionId } from './capture.ts';
import { CaptureGate } from './capture-gate.ts';
import { parseDiff } from './changes.ts';
import { dockerConfigSchema } from './config.ts';
import { EnginePool, formatInstanceId, parseDockerHost, parseInstanceId } from './connection.ts';
import { diskHostConfig, isStorageOptUnsupported } from './disk-limit.ts';
import { StreamDemuxer } from './exec.ts';
import { imageLabels, ownerOf } from './labels.ts';

describe('docker provider units', () => {
  it('parses engine addresses', () => {
    expect(parseDockerHost('/var/run/docker.sock')).toEqual({
      url: 'unix:///var/run/docker.sock',
      options: { socketPath: '/var/run/docker.sock' },
    });
    expect(parseDockerHost('unix:///run/user/1000/podman/podman.sock').url).toBe('unix:///run/user/1000/podman/podman.sock');
    expect(parseDockerHost('tcp://127.0.0.1:2375', {})).toEqual({
      url: 'tcp://127.0.0.1:2375',
      options: { host: '127.0.0.1', port: 2375, protocol: 'http' },
    });
    expect(() => parseDockerHost('ssh://somewhere')).toThrow(/not a socket path/);
  });

  it('qualifies instance ids only for engines other than the default', () => {
    const pool = new EnginePool(parseDockerHost('/var/run/docker.sock'));
    expect(formatInstanceId('abc', 'unix:///var/run/docker.sock', pool)).toBe('abc');
    const other = formatInstanceId('abc', 'tcp://127.0.0.1:2375', pool);
    expect(parseInstanceId(other)).toEqual({ containerId: 'abc', engineUrl: 'tcp://127.0.0.1:2375' });
    expect(parseInstanceId('abc')).toEqual({ containerId: 'abc', engineUrl: undefined });
  });

  it('names captured images sandcast/<environment>:<short-session-id>', () => {
    expect(repositoryFor('Env_Build 1')).toBe('sandcast/env-build-1');
    expect(shortSessionId('0f8e4c2a-1b2c-4d5e-8f90-123456789abc')).toBe('0f8e4c2a1b2c');
    expect(shortSessionId('setup-42-abc')).toBe('setup-42-abc');
    const long = shortSessionId('x'.repeat(80));
    expect(long.length).toBeLessThanOrEqual(40);
    expect(long).not.toBe(shortSessionId(`${'x'.repeat(79)}y`));
  });

  it('reads ownership only from managed labels; captured-image labels are never owners', () => {
    expect(ownerOf({ 'sandcast.managed': 'true', 'sandcast.kind': 'sandbox', 'sandcast.sandbox': 's1' })).toEqual({
      ownerKind: 'sandbox',
      ownerId: 's1',
    });
    expect(ownerOf({ 'sandcast.managed': 'true', 'sandcast.kind': 'setup', 'sandcast.setup': 'u1', 'sandcast.sandbox': '' })).toEqual({
      ownerKind: 'setup',
      ownerId: 'u1',
    });
    // A sandbox booted from a capture inherits the image's emptied setup label.
    expect(
      ownerOf({
        ...imageLabels({ setupSessionId: 'u1', environmentId: 'e', installation: 'i' }),
        'sandcast.managed': 'true',
        'sandcast.kind': 'sandbox',
        'sandcast.sandbox': 's2',
      }),
    ).toEqual({
      ownerKind: 'sandbox',
      ownerId: 's2',
    });
    expect(ownerOf(imageLabels({ setupSessionId: 'u1', environmentId: 'e', installation: 'i' }))).toBeNull();
    expect(ownerOf({ 'sandcast.sandbox': 's1' })).toBeNull();
  });

  it('demultiplexes attach frames split across chunks', () => {
    const frame = (type: number, text: string) => {
      const payload = Buffer.from(text);
      const header = Buffer.alloc(8);
      header[0] = type;
      header.writeUInt32BE(payload.length, 4);
      return Buffer.concat([header, payload]);
    };
    const all = Buffer.concat([frame(1, 'out1'), frame(2, 'err'), frame(1, 'out2')]);
    const out: string[] = [];
    const err: string[] = [];
    const demux = new StreamDemuxer(
      (c) => out.push(c.toString()),
      (c) => err.push(c.toString()),
    );
    for (let i = 0; i < all.length; i += 5) demux.push(all.subarray(i, i + 5));
    expect(out.join('')).toBe('out1out2');
    expect(err.join('')).toBe('err');
  });

  it('config: network defaults to none, limits are validated', () => {
    expect(dockerConfigSchema.parse({ image: 'debian:bookworm' }).network).toBe('none');
    expect(dockerConfigSchema.safeParse({ image: 'x', memoryMb: 1 }).success).toBe(false);
    expect(dockerConfigSchema.safeParse({ image: 'x', dockerHost: 'ftp://x' }).success).toBe(false);
    expect(dockerConfigSchema.safeParse({ image: 'x', unknown: 1 }).success).toBe(false);
  });

  it('config: an environment may name only a local engine (socket or loopback tcp)', () => {
    for (const ok of [
      '/var/run/docker.sock',
      'unix:///run/user/0/docker.sock',
      'tcp://127.0.0.1:2375',
      'tcp://localhost:2376',
      'tcp://[::1]:2375',
    ]) {
      expect(dockerConfigSchema.safeParse({ image: 'x', dockerHost: ok }).success, ok).toBe(true);
    }
    for (const refused of ['tcp://10.0.0.5:2375', 'tcp://docker.example.com:2376', 'tcp://127.0.0.1.example.com:2375', 'tcp://127.0.0.1']) {
      expect(dockerConfigSchema.safeParse({ image: 'x', dockerHost: refused }).success, refused).toBe(false);
    }
  });

  it('reads the engine diff whether it arrives parsed or as raw bytes', () => {
    const entries = [{ Path: '/opt/x', Kind: 1 }];
    expect(parseDiff(entries)).toEqual(entries);
    expect(parseDiff(Buffer.from(JSON.stringify(entries)))).toEqual(entries);
    expect(parseDiff(Buffer.from('null'))).toEqual([]);
    expect(parseDiff(null)).toEqual([]);
  });
});

describe('capture gate', () => {
  const startedExec = () => ({ inspect: async () => ({ Running: true, ExitCode: null }) }) as unknown as Docker.Exec;

  it('refuses an exec while the container is captured, and lets it in again afterwards', async () => {
    const gate = new CaptureGate();
    await gate.capture('c1', async () => {
      expect(() => gate.enter('c1')).toThrow(/being captured/);
      // Another container is not held up.
      gate.enter('c2').release();
    });
    gate.enter('c1').release();
  });

  it('a capture waits until the execs still starting have started', async () => {
    const gate = new CaptureGate();
    const entry = gate.enter('c1');
    const order: string[] = [];
    const capture = gate.capture('c1', async () => {
      order.push('capture');
    });
    await Promise.resolve();
    order.push('exec started');
    entry.releaseWhenStarted(startedExec());
    await capture;
    expect(order).toEqual(['exec started', 'capture']);
  });

  it('one capture at a time per container', async () => {
    const gate = new CaptureGate();
    let inner: unknown;
    await gate.capture('c1', async () => {
      inner = await gate.capture('c1', async () => 'second').catch((error: Error) => error.message);
    });
    expect(inner).toMatch(/already being captured/);
  });
});

describe('disk limit helpers', () => {
  it('holds each file to the limit in the kernel, and asks for a sized rootfs only where supported', () => {
    expect(diskHostConfig(64, false)).toEqual({ Ulimits: [{ Name: 'fsize', Soft: 64 * 1024 * 1024, Hard: 64 * 1024 * 1024 }] });
    expect(diskHostConfig(64, true)).toMatchObject({ StorageOpt: { size: '64M' } });
  });

  it("recognises the engine's refusal of a sized rootfs", () => {
    const refusal = {
      statusCode: 500,
      json: { message: "--storage-opt is supported only for overlay over xfs with 'pquota' mount option" },
    };
    expect(isStorageOptUnsupported(refusal)).toBe(true);
    expect(isStorageOptUnsupported({ statusCode: 404, json: { message: 'No such image' } })).toBe(false);
    expect(isStorageOptUnsupported(new Error('socket hang up'))).toBe(false);
  });
});
