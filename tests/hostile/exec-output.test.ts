import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { streamThenDisconnect, waitForNoProcess } from '../integration/support/exec-stream.ts';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { requireForSuite } from '../integration/support/lifecycle.ts';
import { attack, startHostileServer } from './support/attack.ts';

const MiB = 1024 * 1024;
/** Output per stream in the flood: over 100 MB each, as in the report (issue 10, finding 6). */
const FLOOD_BYTES = 110 * 1000 * 1000;
const DEFAULT_CAP = 4 * MiB;
/** How much the server process may grow while answering the flood: the caps, and room for the GC. */
const GROWTH_BOUND = 128 * MiB;

const database = testDatabases().find((d) => d.kind === 'pglite')!;

const PROVIDERS: Array<{ id: string; skipReason: () => Promise<string | null>; create: (dataDir: string) => SandboxProvider }> = [
  { id: 'fake', skipReason: async () => null, create: (dataDir) => createFakeProvider({ dataDir }) },
  { id: 'local', skipReason: localSkipReason, create: (dataDir) => createLocalProvider({ dataDir }) },
];

/** Samples the process's memory until stopped; the server runs in this process. */
function memorySampler() {
  const baseline = process.memoryUsage();
  let peakRss = baseline.rss;
  let peakHeap = baseline.heapUsed + baseline.external;
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed + now.external);
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      const now = process.memoryUsage();
      return {
        rssGrowth: Math.max(peakRss, now.rss) - baseline.rss,
        heapGrowth: Math.max(peakHeap, now.heapUsed + now.external) - (baseline.heapUsed + baseline.external),
      };
    },
  };
}

for (const provider of PROVIDERS) {
  const runnable = requireForSuite(`hostile exec-output (${provider.id})`, await provider.skipReason());

  describe.skipIf(!runnable)(`exec output floods and bad exec requests (${provider.id}) [pglite]`, () => {
    let t: TestServer;
    let sandboxId: string;
    beforeAll(async () => {
      t = await startHostileServer({ database, providers: (dataDir) => [provider.create(dataDir)] });
      await enableEnvironments(t.client);
      const env = await t.client.environments.create({ name: `flood-${provider.id}`, provider: provider.id, config: {} });
      sandboxId = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    }, 120_000);
    afterAll(async () => {
      await t?.close();
    });

    attack(
      '110 MB on stdout and on stderr: a 200 capped per stream with truncated flags and byte counts; memory stays flat',
      async () => {
        const sampler = memorySampler();
        const result = await t.client.sandboxes.exec(sandboxId, {
          command: [
            'sh',
            '-c',
            `yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c ${FLOOD_BYTES}; yes bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb | head -c ${FLOOD_BYTES} >&2; echo finished > flood.done`,
          ],
          timeoutMs: 300_000,
        });
        const growth = sampler.stop();
        console.info(
          `[${provider.id}] JSON exec of 2 × ${FLOOD_BYTES / 1e6} MB: rss +${(growth.rssGrowth / MiB).toFixed(1)} MiB, heap+external +${(growth.heapGrowth / MiB).toFixed(1)} MiB`,
        );
        expect(result).toMatchObject({
          exitCode: 0,
          timedOut: false,
          truncated: { stdout: true, stderr: true },
          totalBytes: { stdout: FLOOD_BYTES, stderr: FLOOD_BYTES },
        });
        expect(result.stdout.length).toBe(DEFAULT_CAP);
        expect(result.stderr.length).toBe(DEFAULT_CAP);
        expect(result.stdout.startsWith('aaaa')).toBe(true);
        // The cap never blocked the command: it ran to its last line.
        expect((await t.client.sandboxes.exec(sandboxId, { command: ['cat', 'flood.done'] })).stdout).toBe('finished\n');
        expect(growth.rssGrowth).toBeLessThan(GROWTH_BOUND);
        expect(growth.heapGrowth).toBeLessThan(GROWTH_BOUND);
      },
      300_000,
    );

    attack('Accept headers the route cannot answer are a 406 that names the two it can', async () => {
      const path = `/api/sandboxes/${sandboxId}/exec`;
      const body = JSON.stringify({ command: ['echo', 'hi'] });
      for (const accept of [
        'text/html',
        'application/x-ndjson;q=0',
        'application/x-ndjson;q=banana',
        'text/event-stream, image/*',
        'garbage',
      ]) {
        const res = await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
        expect(res.status, accept).toBe(406);
        expect(res.body, accept).toMatchObject({
          error: { code: 'not_acceptable', message: expect.stringContaining('application/x-ndjson') },
        });
      }
      for (const accept of ['*/*', 'application/*', 'application/json, application/x-ndjson;q=0.5', '']) {
        const res = await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
        expect(res.status, accept).toBe(200);
        expect(res.body, accept).toMatchObject({ stdout: 'hi\n' });
      }
      for (const accept of ['APPLICATION/X-NDJSON; charset=utf-8', 'application/json;q=0.1, application/x-ndjson']) {
        const res = await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
        expect(res.status, accept).toBe(200);
        expect(
          res.text
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line).type),
          accept,
        ).toEqual(['stdout', 'exit']);
      }
    });

    attack('NUL bytes, huge or malformed timeouts, wrong types and oversized bodies on the stream route are 4xx', async () => {
      const path = `/api/sandboxes/${sandboxId}/exec`;
      const bodies: unknown[] = [
        { command: ['sh', '-c', 'echo a\u0000b'] },
        { command: ['echo\u0000', 'x'] },
        { command: ['env'], env: { A: 'x\u0000y' } },
        { command: ['pwd'], cwd: '/workspace\u0000/../../etc' },
        { command: ['true'], timeoutMs: 1e12 },
        { command: ['true'], timeoutMs: -1 },
        { command: ['true'], timeoutMs: 1.5 },
        { command: ['true'], timeoutMs: '60' },
        { command: [] },
        { command: 'echo hi' },
        { command: [42] },
        { command: ['true'], stdin: 'x' },
        { command: ['true'], cwd: 'relative/dir' },
      ];
      for (const body of bodies) {
        const res = await t.fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
          body: JSON.stringify(body),
        });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect((res.body as { error: { message: string } }).error.message.length, JSON.stringify(body)).toBeGreaterThan(10);
      }
      const huge = await t.fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ command: ['echo', 'x'.repeat(2 * MiB)] }),
      });
      expect(huge.status).toBe(413);
      const missing = await t.fetch('/api/sandboxes/sbx_does_not_exist/exec', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ command: ['true'] }),
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
    });

    attack('a `..` working directory never leaves the sandbox, streamed or not', async () => {
      const marker = `escape-${Date.now()}`;
      for (const accept of ['application/json', 'application/x-ndjson']) {
        const res = await t.fetch(`/api/sandboxes/${sandboxId}/exec`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept },
          body: JSON.stringify({ command: ['sh', '-c', `touch ${marker}; pwd`], cwd: '/../../../../tmp' }),
        });
        expect(res.status, accept).toBeLessThan(500);
        const { existsSync } = await import('node:fs');
        expect(existsSync(`/tmp/${marker}`), `${accept}: a file was made in the host's /tmp`).toBe(false);
      }
    });

    attack('twenty clients that start a stream and drop the connection leave no process behind', async () => {
      const secs = 3000 + Math.floor(Math.random() * 5000);
      const streams = await Promise.all(
        Array.from({ length: 20 }, () =>
          streamThenDisconnect({
            url: t.url,
            path: `/api/sandboxes/${sandboxId}/exec`,
            body: { command: ['sh', '-c', `echo up; sleep ${secs} & sleep ${secs}`] },
          }),
        ),
      );
      for (const stream of streams) expect(JSON.parse(stream.firstLine)).toEqual({ type: 'stdout', data: 'up\n' });
      for (const stream of streams) stream.disconnect();
      expect(await waitForNoProcess({ client: t.client, sandboxId, prefix: `sleep ${secs}`, deadlineMs: 30_000 })).toBe(0);
      // The server still answers, streamed and not.
      expect((await t.client.sandboxes.exec(sandboxId, { command: ['echo', 'alive'] })).stdout).toBe('alive\n');
    });
  });
}
