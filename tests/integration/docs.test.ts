import { readFile } from 'node:fs/promises';
import { ERROR_CODES } from '@sandcast/core';
import { testDatabases } from '@sandcast/db/testing';
import { describe, expect, it } from 'vitest';
import { startTestServer } from './support/harness.ts';

const read = (p: string) => readFile(new URL(`../../${p}`, import.meta.url), 'utf8');

describe('documentation stays in step with the code', () => {
  it('docs/spec/errors.md lists every error code', async () => {
    const doc = await read('docs/spec/errors.md');
    for (const code of ERROR_CODES) expect(doc, code).toContain(`\`${code}\``);
  });

  it('docs/spec/http-api.md lists every route with its access', async () => {
    const doc = await read('docs/spec/http-api.md');
    const t = await startTestServer({ database: testDatabases().find((d) => d.kind === 'pglite')! });
    try {
      for (const route of t.server.routes.filter((r) => r.method !== 'HEAD')) {
        const line = doc.split('\n').find((l) => l.startsWith(`| \`${route.method} ${route.url}\``));
        expect(line, `${route.method} ${route.url} is not in the route table`).toBeDefined();
        expect(line).toContain(`| ${route.access}`);
      }
    } finally {
      await t.close();
    }
  });
});
