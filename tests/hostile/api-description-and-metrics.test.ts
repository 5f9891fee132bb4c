import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { TestServer } from '../integration/support/harness.ts';
import { attack, startHostileServer } from './support/attack.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('the API description and /metrics under attack', () => {
  let t: TestServer;
  let admin: string;

  beforeAll(async () => {
    t = await startHostileServer({ database: pglite, mode: 'authenticated' });
    admin = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim();
  });
  afterAll(async () => {
    await t?.close();
  });

  attack('documentation file names that reach for the disk, the prototype or the parser get 404 (400 for bad bytes)', async () => {
    const names = [
      '..%2F..%2Fpackage.json',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '..%5C..%5Cpackage.json',
      'swagger-ui.css%00.js',
      '%00',
      'constructor',
      '__proto__',
      'hasOwnProperty',
      'index.html',
      'x'.repeat(8_000),
      '%F0%9F%92%A5',
    ];
    for (const name of names) {
      const answer = await t.fetch(`/api/docs/${name}`);
      // A NUL byte is refused at the edge for every path, before any route sees it.
      const refusedAtEdge = name.includes('%00');
      expect(answer.status, name.slice(0, 40)).toBe(refusedAtEdge ? 400 : 404);
      expect(answer.body, name.slice(0, 40)).toMatchObject({ error: { code: refusedAtEdge ? 'bad_request' : 'not_found' } });
      expect(answer.text).not.toContain('"name": "sandcast"');
    }
  });

  attack('the OpenAPI document ignores junk in its query, refuses bad bytes and other methods', async () => {
    const junk = await t.fetch(`/api/openapi.json?${'a'.repeat(4_000)}=1&__proto__[x]=1`);
    expect(junk.status).toBe(200);
    expect((junk.body as { openapi: string }).openapi).toBe('3.1.0');
    const nul = await t.fetch('/api/openapi.json?x=%00');
    expect(nul.status).toBe(400);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const answer = await t.fetch('/api/openapi.json', { method, headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
      expect(answer.status, method).toBe(404);
    }
  });

  attack('/metrics refuses callers without an admin key in authenticated mode', async () => {
    const agent = (await t.clientWithKey(admin).keys.create({ name: 'scraper', role: 'agent' })).secret;
    const cases: Array<[Record<string, string>, number]> = [
      [{}, 401],
      [{ authorization: 'Bearer ' }, 401],
      [{ authorization: `Bearer ${'x'.repeat(6_000)}` }, 401],
      [{ authorization: 'Bearer sc_\u0000' }, 401],
      [{ authorization: `Bearer ${agent}` }, 403],
      [{ authorization: `Bearer ${admin}` }, 200],
    ];
    for (const [headers, status] of cases) {
      const answer = await fetch(`${t.url}/metrics`, { headers }).catch(() => null);
      // A header fetch itself refuses to send (the NUL) proves nothing about the server: skip it.
      if (answer === null) continue;
      expect(answer.status, JSON.stringify(headers).slice(0, 60)).toBe(status);
      await answer.text();
    }
  });

  attack('a flood of distinct URLs cannot grow the metrics: unknown paths share one series', async () => {
    const series = async () => {
      const text = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
      return text.split('\n').filter((l) => l.startsWith('sandcast_http_request_duration_seconds_count')).length;
    };
    for (let i = 0; i < 3; i++) await t.fetch(`/api/warm-up-${i}`);
    const before = await series();
    for (let i = 0; i < 300; i++) {
      await t.fetch(`/api/flood/${crypto.randomUUID()}?q=${i}`, { method: i % 2 ? 'GET' : 'DELETE' });
    }
    const after = await series();
    // At most one new series: DELETE on an unmatched path, by method.
    expect(after - before).toBeLessThanOrEqual(1);
  });
});
