import { readFile } from 'node:fs/promises';
import { ERROR_CODES } from '@sandcast/core';
import { testDatabases } from '@sandcast/db/testing';
import { describe, expect, it } from 'vitest';
import { startTestServer } from './support/harness.ts';
import { type OpenApiDocument, operationsOf } from './support/openapi.ts';

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

  it('docs/spec/http-api.md and the OpenAPI document list the same operations with the same access', async () => {
    const doc = await read('docs/spec/http-api.md');
    const table = new Map<string, string>();
    for (const line of doc.split('\n')) {
      const match = /^\| `(GET|POST|PATCH|PUT|DELETE) ([^`]+)`\s*\|\s*([a-z]+)/.exec(line);
      if (match) table.set(`${match[1]} ${match[2]}`, match[3] as string);
    }
    const t = await startTestServer({ database: testDatabases().find((d) => d.kind === 'pglite')! });
    try {
      const operations = operationsOf((await t.fetch('/api/openapi.json')).body as OpenApiDocument);
      for (const [operation, access] of operations) expect(table.get(operation), `${operation} in http-api.md`).toBe(access);
      for (const [row] of table)
        if (row !== 'GET /*') expect(operations.has(row), `${row} of http-api.md in the OpenAPI document`).toBe(true);
    } finally {
      await t.close();
    }
  });
});
