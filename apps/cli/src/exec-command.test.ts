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

  it('sends the words after -- verbatim, options before it parsed, and exits with the command’s code', async () => {
    const requests: Array<{ url: string; body: unknown }> = [];
    vi.stubGlobal('fetch', async (url: URL, init: RequestInit) => {
      requests.push({ url: String(url), body: JSON.parse(String(init.body)) });
      return new Response(JSON.stringify({ exitCode: 7, stdout: 'out\n', stderr: 'err\n', timedOut: false }), { status: 200 });
    });
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const argv = ['sandbox', 'exec', 'sbx_1', '--cwd', '/tmp', '--env', 'A=1=2', '--timeout', '1.5', '--', 'sh', '-c', 'echo "$A" --cwd x'];
    await buildProgram({ SANDCAST_URL: 'http://sandcast.test' }).parseAsync(argv, { from: 'user' });
    expect(requests).toEqual([
      {
        url: 'http://sandcast.test/api/sandboxes/sbx_1/exec',
        body: { command: ['sh', '-c', 'echo "$A" --cwd x'], cwd: '/tmp', env: { A: '1=2' }, timeoutMs: 1500 },
      },
    ]);
    expect(stdout).toHaveBeenCalledWith('out\n');
    expect(stderr).toHaveBeenCalledWith('err\n');
    expect(process.exitCode).toBe(7);
  });

  it('refuses a missing command, a malformed --env and a bad --timeout as usage mistakes', () => {
    expect(() => execBodyFrom([], {})).toThrow(UsageError);
    expect(() => execBodyFrom(['true'], { env: ['=x'] })).toThrow(/KEY=VALUE/);
    expect(() => execBodyFrom(['true'], { timeout: 'soon' })).toThrow(/--timeout/);
    expect(execBodyFrom(['true'], {})).toEqual({ command: ['true'] });
  });
});
