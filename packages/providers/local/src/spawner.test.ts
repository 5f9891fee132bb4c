import { describe, expect, it } from 'vitest';
import { run } from './proc.ts';
import { hostSpawn, stopSpawnerWhenIdle } from './spawner.ts';

describe('the spawner process', () => {
  it('hands every command its own output, errors, exit code and stdin, even many at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        run('/bin/sh', ['-c', `read line; echo "$line-${i}"; echo err-${i} >&2; exit ${i % 4}`], { input: `in${i}\n` }),
      ),
    );
    results.forEach((result, i) => {
      expect(result.stdout.toString()).toBe(`in${i}-${i}\n`);
      expect(result.stderr).toBe(`err-${i}\n`);
      expect(result.code).toBe(i % 4);
    });
  });

  it('keeps output a command wrote before it exited, and its cwd and environment', async () => {
    const child = await hostSpawn('/bin/sh', ['-c', 'head -c 300000 /dev/zero; pwd; echo "$ONLY_HERE"'], {
      cwd: '/tmp',
      env: { PATH: '/usr/bin:/bin', ONLY_HERE: 'yes' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let bytes = 0;
    let tail = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-20);
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(bytes).toBe(300000 + '/tmp\nyes\n'.length);
    expect(tail.endsWith('/tmp\nyes\n')).toBe(true);
  });

  it('kills on request and reports the signal', async () => {
    const child = await hostSpawn('/bin/sleep', ['30'], { env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<[number | null, string | null]>((resolve) => child.on('exit', (code, signal) => resolve([code, signal])));
    child.kill('SIGKILL');
    expect(await exited).toEqual([null, 'SIGKILL']);
  });

  it('refuses a command that cannot start, with the reason', async () => {
    await expect(hostSpawn('/nonexistent/binary', [], { env: {}, stdio: ['pipe', 'pipe', 'pipe'] })).rejects.toThrow(/ENOENT/);
  });

  it('starts again after it was stopped', async () => {
    stopSpawnerWhenIdle();
    expect((await run('/bin/echo', ['again'])).stdout.toString()).toBe('again\n');
    stopSpawnerWhenIdle();
  });
});
