import { afterEach, describe, expect, it, vi } from 'vitest';
import { execBodyFrom } from './exec-command.ts';
import { UsageError } from './format.ts';
import { buildProgram } from './program.ts';

describe('exec arguments', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  it('sends the words after -- verbatim, options before it parsed, prints output as it streams and exits with the command’s code', async () => {
    const requests: Array<{ url: string; body: unknown; accept: string | undefined }> = [];
    vi.stubGlobal('fetch', async (url: URL, init: RequestInit) => {
      requests.push({ url: String(url), body: JSON.parse(String(init.body)), accept: (init.headers as Record<string, string>).accept });
      const frames = [
        { type: 'stdout', data: 'out\n' },
        { type: 'stderr', data: '/w==', encoding: 'base64' },
        {
          type: 'exit',
          exitCode: 7,
          timedOut: false,
          durationMs: 3,
          truncated: { stdout: false, stderr: false },
          totalBytes: { stdout: 4, stderr: 2 },
        },
      ];
      return new Response(frames.map((f) => `${JSON.stringify(f)}\n`).join(''), {
        status: 200,
        headers: { 'content-type': 'application/x-ndjson' },
      });
    });
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const argv = ['sandbox', 'exec', 'sbx_1', '--cwd', '/tmp', '--env', 'A=1=2', '--timeout', '1.5', '--', 'sh', '-c', 'echo "$A" --cwd x'];
    await buildProgram({ SANDCAST_URL: 'http://sandcast.test' }).parseAsync(argv, { from: 'user' });
    expect(requests).toEqual([
      {
        url: 'http://sandcast.test/api/sandboxes/sbx_1/exec',
        body: { command: ['sh', '-c', 'echo "$A" --cwd x'], cwd: '/tmp', env: { A: '1=2' }, timeoutMs: 1500 },
        accept: 'application/x-ndjson',
      },
    ]);
    expect(stdout).toHaveBeenCalledWith(new TextEncoder().encode('out\n'));
    expect(stderr).toHaveBeenCalledWith(new Uint8Array([0xff]));
    expect(process.exitCode).toBe(7);
  });

  it('exits 124 when the streamed command timed out', async () => {
    vi.stubGlobal('fetch', async () => {
      const exit = {
        type: 'exit',
        exitCode: 137,
        timedOut: true,
        durationMs: 9,
        truncated: { stdout: false, stderr: false },
        totalBytes: { stdout: 0, stderr: 0 },
      };
      return new Response(`${JSON.stringify(exit)}\n`, { status: 200 });
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await buildProgram({ SANDCAST_URL: 'http://sandcast.test' }).parseAsync(['sandbox', 'exec', 'sbx_1', '--', 'sleep', '9'], {
      from: 'user',
    });
    expect(stderr).toHaveBeenCalledWith('sandcast: the command timed out and was stopped\n');
    expect(process.exitCode).toBe(124);
  });

  it('with --json prints the capped answer and says on stderr when the server cut the output', async () => {
    vi.stubGlobal('fetch', async () => {
      const result = {
        exitCode: 0,
        stdout: 'aaaa',
        stderr: '',
        timedOut: false,
        truncated: { stdout: true, stderr: false },
        totalBytes: { stdout: 99, stderr: 0 },
      };
      return new Response(JSON.stringify(result), { status: 200 });
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await buildProgram({ SANDCAST_URL: 'http://sandcast.test' }).parseAsync(['--json', 'sandbox', 'exec', 'sbx_1', '--', 'yes'], {
      from: 'user',
    });
    expect(stderr).toHaveBeenCalledWith(expect.stringMatching(/^sandcast: stdout was cut at 4 characters of 99 bytes/));
    expect(process.exitCode).toBe(0);
  });

  it('refuses a missing command, a malformed --env and a bad --timeout as usage mistakes', () => {
    expect(() => execBodyFrom([], {})).toThrow(UsageError);
    expect(() => execBodyFrom(['true'], { env: ['=x'] })).toThrow(/KEY=VALUE/);
    expect(() => execBodyFrom(['true'], { timeout: 'soon' })).toThrow(/--timeout/);
    expect(execBodyFrom(['true'], {})).toEqual({ command: ['true'] });
  });
});
