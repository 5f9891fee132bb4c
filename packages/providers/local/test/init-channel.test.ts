import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ensureInitBinary } from '../src/native-init.ts';

/**
 * The init's agent channel (ADR 0034): the init forks an agent only for a well-formed message
 * carrying one descriptor; anything else on the channel (nothing, bytes without a descriptor)
 * gives no agent, a line in its log, and a ready report of `agent=0` (the host then starts one
 * the old way). Run as pid 1 of a fresh pid namespace (`unshare`), as root.
 */
describe.skipIf(process.getuid?.() !== 0)('sandcast-init agent channel', () => {
  const start = async (send: (channel: Socket) => void) => {
    const built = await ensureInitBinary();
    if ('error' in built) throw new Error(built.error);
    const child = spawn('unshare', ['--pid', '--fork', built.path, '0', '5', '/bin/true', '6'], {
      stdio: ['pipe', 'ignore', 'pipe', 'ignore', 'ignore', 'pipe', 'pipe'],
    });
    const stdio = child.stdio as unknown as Socket[];
    const channel = stdio[6]!;
    channel.on('error', () => undefined); // the init closes its end with the bytes unread
    send(channel);
    let ready = '';
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    await new Promise<void>((resolve) => {
      stdio[5]!.on('data', (chunk: Buffer) => {
        ready += chunk.toString('utf8');
        if (ready.includes('\n')) resolve();
      });
    });
    // Its stdin stands for the hold FIFO: closing it stops the init.
    child.stdin?.end();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    channel.destroy();
    return { ready, log, code };
  };

  it('with nothing on the channel: no agent, says so, reports agent=0, and still serves as the init', async () => {
    const ran = await start(() => undefined);
    expect(ran.ready).toMatch(/^ready oom_score_adj=-?\d+ errno=\d+ agent=0\n$/);
    expect(ran.log).toMatch(/no exec agent socket on the channel/);
    expect(ran.code).toBe(0);
  }, 20_000);

  it('with bytes but no descriptor: the same', async () => {
    const ran = await start((channel) => channel.write(Buffer.alloc(4096, 'x')));
    expect(ran.ready).toMatch(/ agent=0\n$/);
    expect(ran.log).toMatch(/no exec agent socket on the channel/);
    expect(ran.code).toBe(0);
  }, 20_000);
});
