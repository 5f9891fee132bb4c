import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import type { ExecChunk, ExecProcess } from '../exec-output.ts';
import type { SandboxProvider } from '../provider.ts';

type Test = (name: string, body: () => Promise<void>) => void;

/** Reads `process.output` until `predicate` holds for what one stream printed so far. */
async function readUntil(process: ExecProcess, stream: ExecChunk['stream'], predicate: (text: string) => boolean) {
  let text = '';
  for (;;) {
    const chunk = await nextChunk(process);
    if (chunk === null) throw new Error(`output ended before ${stream} matched; got ${JSON.stringify(text.slice(-300))}`);
    if (chunk.stream === stream) text += chunk.data.toString('utf8');
    if (predicate(text)) return text;
  }
}

function nextChunk(process: ExecProcess): Promise<ExecChunk | null> {
  const output = process.output;
  const chunk = output.read() as ExecChunk | null;
  if (chunk !== null) return Promise.resolve(chunk);
  if (output.readableEnded) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onReadable = () => {
      const next = output.read() as ExecChunk | null;
      if (next === null) return;
      done();
      resolve(next);
    };
    const onEnd = () => {
      done();
      resolve(null);
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const done = () => {
      output.off('readable', onReadable);
      output.off('end', onEnd);
      output.off('error', onError);
    };
    output.on('readable', onReadable);
    output.on('end', onEnd);
    output.on('error', onError);
  });
}

async function drain(process: ExecProcess): Promise<{ stdout: string; stderr: string }> {
  const text = { stdout: '', stderr: '' };
  for (let chunk = await nextChunk(process); chunk !== null; chunk = await nextChunk(process))
    text[chunk.stream] += chunk.data.toString('utf8');
  return text;
}

/**
 * Streaming exec and output caps, part of the conformance suite. Ordering is proven with a FIFO
 * the command waits on, never with timing: the first line must arrive while the command still
 * waits for the test.
 */
export function execStreamChecks(options: {
  test: Test;
  provider: () => SandboxProvider;
  createSandbox: () => Promise<{ instanceId: string }>;
}): void {
  const { test } = options;
  let counter = 0;
  const fifo = () => `sandcast-go-${process.pid}-${counter++}.fifo`;

  test('execStream hands over output while the command runs, stderr apart, then its exit', async () => {
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const go = fifo();
    const running = await provider.execStream(instanceId, {
      command: ['sh', '-c', `mkfifo ${go} && echo first && echo warn >&2 && read x < ${go} && echo "second $x" && exit 7`],
    });
    await readUntil(running, 'stdout', (text) => text === 'first\n');
    // The command is still blocked on the FIFO: release it only now.
    const released = await provider.exec(instanceId, { command: ['sh', '-c', `echo go > ${go}`] });
    expect(released.exitCode).toBe(0);
    const rest = await drain(running);
    expect(rest.stdout).toBe('second go\n');
    expect(await running.exit).toEqual({ exitCode: 7, timedOut: false });
  });

  test('execStream timeout kills the command and still reports the exit', async () => {
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const running = await provider.execStream(instanceId, { command: ['sh', '-c', 'echo started; sleep 600'], timeoutMs: 500 });
    const text = await drain(running);
    expect(text.stdout).toBe('started\n');
    expect(await running.exit).toMatchObject({ timedOut: true });
  });

  test('execStream kill() ends the whole process tree', async () => {
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const secs = 1137 + Math.floor(Math.random() * 800);
    const running = await provider.execStream(instanceId, {
      command: ['sh', '-c', `sleep ${secs} & echo "child $!"; sleep ${secs}`],
    });
    const line = await readUntil(running, 'stdout', (text) => text.endsWith('\n'));
    expect(line).toMatch(/^child \d+\n$/);
    await running.kill();
    await running.exit;
    const after = await provider.exec(instanceId, {
      command: [
        'sh',
        '-c',
        `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`,
      ],
    });
    expect(after.stdout.trim()).toBe('0');
  });

  test('execStream with stdinStream: the command reads what the host writes while it runs (duplexCommandStream)', async () => {
    const provider = options.provider();
    if (!provider.capabilities.duplexCommandStream) return;
    const { instanceId } = await options.createSandbox();
    const stdin = new PassThrough();
    const running = await provider.execStream(instanceId, {
      command: ['sh', '-c', 'while read -r line; do echo "got $line"; done; echo eof'],
      stdinStream: stdin,
    });
    // Each line is written only once the answer to the previous one arrived: a stream, not a buffer.
    stdin.write('one\n');
    await readUntil(running, 'stdout', (text) => text === 'got one\n');
    stdin.write('two\n');
    const rest = await readUntil(running, 'stdout', (text) => text === 'got two\n');
    expect(rest).toBe('got two\n');
    stdin.end();
    expect((await drain(running)).stdout).toBe('eof\n');
    expect(await running.exit).toEqual({ exitCode: 0, timedOut: false });
  });

  test('exec keeps at most maxOutputBytes per stream, reads the rest and counts it', async () => {
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const result = await provider.exec(instanceId, {
      // 1 MiB per stream, then a line that proves the command was never blocked by the cap.
      command: ['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" o; head -c 1048576 /dev/zero | tr "\\0" e >&2; echo finished > done.txt'],
      maxOutputBytes: 65536,
    });
    expect(result).toMatchObject({
      exitCode: 0,
      timedOut: false,
      truncated: { stdout: true, stderr: true },
      totalBytes: { stdout: 1048576, stderr: 1048576 },
    });
    expect(result.stdout).toBe('o'.repeat(65536));
    expect(result.stderr).toBe('e'.repeat(65536));
    expect((await provider.exec(instanceId, { command: ['cat', 'done.txt'] })).stdout).toBe('finished\n');
    const small = await provider.exec(instanceId, { command: ['sh', '-c', 'printf héllo'], maxOutputBytes: 65536 });
    expect(small).toMatchObject({ stdout: 'héllo', truncated: { stdout: false, stderr: false }, totalBytes: { stdout: 6, stderr: 0 } });
  });
}
