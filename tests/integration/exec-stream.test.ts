import { frameBytes } from '@sandcast/client';
import type { ExecStreamFrame } from '@sandcast/contracts';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { frameReader, streamThenDisconnect, textOf, waitForNoProcess } from './support/exec-stream.ts';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';

const MiB = 1024 * 1024;

const PROVIDERS: Array<{
  id: string;
  skipReason: () => Promise<string | null>;
  create: (dataDir: string) => SandboxProvider;
  config: Record<string, unknown>;
}> = [
  { id: 'fake', skipReason: async () => null, create: (dataDir) => createFakeProvider({ dataDir }), config: {} },
  { id: 'local', skipReason: localSkipReason, create: (dataDir) => createLocalProvider({ dataDir }), config: {} },
  { id: 'docker', skipReason: dockerSkipReason, create: (dataDir) => createDockerProvider({ dataDir }), config: { image: TEST_IMAGE } },
];

for (const provider of PROVIDERS) {
  const runnable = requireForSuite(`exec-stream-${provider.id}`, await provider.skipReason());

  describe.skipIf(!runnable)(`live exec output on the ${provider.id} provider [${REAL_PROVIDER_DATABASE}]`, () => {
    const { server } = useRealProviderServer((dataDir) => [provider.create(dataDir)]);
    let t: TestServer;
    let environmentId: string;
    let sandboxId: string;
    let counter = 0;
    beforeAll(async () => {
      t = server();
      environmentId = (await t.client.environments.create({ name: `exec-${provider.id}`, provider: provider.id, config: provider.config }))
        .id;
      sandboxId = (await t.client.sandboxes.create({ environmentId })).id;
    }, 120_000);

    it('sends the first output while the command still runs, stderr apart, then the exit code', async () => {
      const fifo = `go-${counter++}.fifo`;
      const stream = t.client.sandboxes.execStream(sandboxId, {
        command: ['sh', '-c', `mkfifo ${fifo} && echo first && echo warning >&2 && read x < ${fifo} && echo "then $x" && exit 7`],
      });
      const frames = frameReader(stream);
      // stdout and stderr are separate pipes: which arrives first is the kernel's business.
      const early = [];
      for (;;) {
        const frame = await frames.next();
        if (!frame) throw new Error('the stream ended before any stdout');
        early.push(frame);
        if (frame.type === 'stdout') break;
      }
      expect(early.at(-1)).toEqual({ type: 'stdout', data: 'first\n' });
      // The command waits on the FIFO until now: the first output came before its end.
      const released = await t.client.sandboxes.exec(sandboxId, { command: ['sh', '-c', `echo go > ${fifo}`] });
      expect(released.exitCode).toBe(0);
      const rest = await frames.rest();
      expect(textOf(rest, 'stdout')).toBe('then go\n');
      expect(textOf([...early, ...rest], 'stderr')).toBe('warning\n');
      expect(rest.at(-1)).toMatchObject({
        type: 'exit',
        exitCode: 7,
        timedOut: false,
        durationMs: expect.any(Number),
        truncated: { stdout: false, stderr: false },
        totalBytes: { stdout: 14, stderr: 8 },
      });
    });

    it('a timeout kills the command and still sends the exit frame', async () => {
      const frames = await frameReader(
        t.client.sandboxes.execStream(sandboxId, { command: ['sh', '-c', 'echo started; sleep 600'], timeoutMs: 800 }),
      ).rest();
      expect(textOf(frames, 'stdout')).toBe('started\n');
      expect(frames.at(-1)).toMatchObject({ type: 'exit', timedOut: true });
    });

    it('splits no character across frames, and sends bytes that are not UTF-8 as base64', async () => {
      // Lines of 7 bytes: pipe reads of any power-of-two size end inside a character.
      const frames = await frameReader(
        t.client.sandboxes.execStream(sandboxId, { command: ['sh', '-c', "yes '€€' | head -n 50000; printf 'x\\377\\376y' >&2"] }),
      ).rest();
      const stdout = frames.filter((f) => f.type === 'stdout');
      expect(stdout.every((f) => f.type === 'stdout' && f.encoding === undefined)).toBe(true);
      expect(textOf(frames, 'stdout')).toBe('€€\n'.repeat(50000));
      const stderr = frames.filter((f): f is Extract<ExecStreamFrame, { type: 'stderr' }> => f.type === 'stderr');
      expect(Buffer.concat(stderr.map((f) => frameBytes(f)))).toEqual(Buffer.from([0x78, 0xff, 0xfe, 0x79]));
      expect(stderr.some((f) => f.encoding === 'base64')).toBe(true);
      expect(frames.at(-1)).toMatchObject({ type: 'exit', exitCode: 0, totalBytes: { stdout: 350000, stderr: 4 } });
    });

    it('a client that disconnects has the command and its children killed, in the sandbox', async () => {
      const secs = 2000 + Math.floor(Math.random() * 5000);
      const stream = await streamThenDisconnect({
        url: t.url,
        path: `/api/sandboxes/${sandboxId}/exec`,
        body: { command: ['sh', '-c', `sleep ${secs} & echo "child $!"; sleep ${secs}`] },
      });
      expect(stream.status).toBe(200);
      expect(JSON.parse(stream.firstLine)).toMatchObject({ type: 'stdout', data: expect.stringMatching(/^child \d+\n$/) });
      expect(await waitForNoProcess({ client: t.client, sandboxId, prefix: `sleep ${secs}`, deadlineMs: 0 })).toBe(2);
      stream.disconnect();
      expect(await waitForNoProcess({ client: t.client, sandboxId, prefix: `sleep ${secs}` })).toBe(0);
    });

    it('streams a setup session command the same way', async () => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      try {
        const out: string[] = [];
        const exit = await t.client.customImages
          .execStream(session.id, { command: ['sh', '-c', 'echo one; echo two >&2; exit 3'] })
          .onStdout((text) => out.push(text))
          .onStderr((text) => out.push(`E:${text}`))
          .done();
        expect(out.sort()).toEqual(['E:two\n', 'one\n']);
        expect(exit).toMatchObject({ exitCode: 3, timedOut: false });
      } finally {
        await t.client.customImages.cancel(session.id);
      }
    });

    it('the JSON answer reports what it kept: truncated flags and bytes per stream', async () => {
      const result = await t.client.sandboxes.exec(sandboxId, { command: ['sh', '-c', 'printf abc; printf de >&2'] });
      expect(result).toEqual({
        exitCode: 0,
        stdout: 'abc',
        stderr: 'de',
        timedOut: false,
        truncated: { stdout: false, stderr: false },
        totalBytes: { stdout: 3, stderr: 2 },
      });
    });

    it('a 1 GiB flood read slowly keeps server memory flat: the command waits for the reader', { timeout: 300_000 }, async () => {
      const total = 1024 * MiB;
      const stream = t.client.sandboxes.execStream(sandboxId, {
        command: ['sh', '-c', `yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde | head -c ${total}`],
        timeoutMs: 600_000,
      });
      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      let slowPeak = baseline;
      let received = 0;
      let exit: ExecStreamFrame | undefined;
      for await (const frame of stream) {
        if (frame.type === 'exit') exit = frame;
        if (frame.type !== 'stdout') continue;
        received += frame.data.length;
        const rss = process.memoryUsage().rss;
        peak = Math.max(peak, rss);
        // The first 64 MiB are read slowly (a few MB/s): without backpressure the server would
        // hold most of the gigabyte the command can write meanwhile.
        if (received < 64 * MiB) {
          slowPeak = Math.max(slowPeak, rss);
          await new Promise((r) => setTimeout(r, 2));
        }
      }
      console.info(
        `[${provider.id}] 1 GiB flood: rss baseline ${(baseline / MiB).toFixed(0)} MiB, peak while slow +${((slowPeak - baseline) / MiB).toFixed(0)} MiB, peak +${((peak - baseline) / MiB).toFixed(0)} MiB`,
      );
      expect(received).toBe(total);
      expect(exit).toMatchObject({ type: 'exit', exitCode: 0, totalBytes: { stdout: total, stderr: 0 } });
      expect(slowPeak - baseline).toBeLessThan(160 * MiB);
      expect(peak - baseline).toBeLessThan(160 * MiB);
    });
  });
}
