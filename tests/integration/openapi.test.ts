import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/harness.ts';
import { type OpenApiDocument, operationsOf } from './support/openapi.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('the OpenAPI document', () => {
  let t: TestServer;
  let document: OpenApiDocument;

  beforeAll(async () => {
    t = await startTestServer({ database: pglite, mode: 'authenticated' });
    const answer = await t.fetch('/api/openapi.json');
    expect(answer.status).toBe(200);
    document = answer.body as OpenApiDocument;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is OpenAPI 3.1 for this version, public even in authenticated mode', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe((await t.client.health()).version);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['bearerKey', 'sessionCookie']);
  });

  it('lists every registered route with its method and declared access, and nothing else', () => {
    const operations = operationsOf(document);
    const registered = t.server.routes.filter((r) => r.method !== 'HEAD' && r.url !== '/*');
    expect(registered.length).toBeGreaterThan(30);
    for (const route of registered) {
      expect(operations.get(`${route.method} ${route.url}`), `${route.method} ${route.url} is not in the OpenAPI document`).toBe(
        route.access,
      );
    }
    expect([...operations.keys()].sort()).toEqual(registered.map((r) => `${r.method} ${r.url}`).sort());
  });

  it('asks for a credential exactly where the route needs one, and answers errors with the envelope', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method} ${path}`;
        if (operation['x-sandcast-access'] === 'public') expect(operation.security, where).toEqual([]);
        else expect(operation.security, where).toEqual([{ bearerKey: [] }, { sessionCookie: [] }]);
        expect(JSON.stringify(operation.responses.default), where).toContain('#/components/schemas/ErrorEnvelope');
      }
    }
    expect(JSON.stringify(document.components.schemas.ErrorEnvelope)).toContain('"validation_failed"');
  });

  it('describes bodies and answers from the contracts: strict objects, the closed error codes', () => {
    const create = document.paths['/api/environments']?.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown>; additionalProperties: boolean } } } };
      responses: Record<string, unknown>;
    };
    const schema = create.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(['config', 'connectionId', 'name', 'provider', 'spec']);
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(create.responses)).toEqual(['201', 'default']);
  });

  it("describes a setup session's ports with the sandbox's body and URL answer, named by the session", () => {
    const base = '/api/environment-custom-image-setup-sessions/{sessionId}/ports';
    const list = JSON.stringify(document.paths[base]?.get?.responses['200']);
    const opened = JSON.stringify(document.paths[base]?.post?.responses['201']);
    expect(list).toContain('"sessionId"');
    expect(list).not.toContain('"sandboxId"');
    expect(opened).toContain('"baseUrl"');
    expect(JSON.stringify(document.paths[`${base}/{port}/url`]?.get?.responses['200'])).toBe(
      JSON.stringify(document.paths['/api/sandboxes/{id}/ports/{port}/url']?.get?.responses['200']),
    );
  });

  it('serves the documentation page and its files from this server, with the UI headers', async () => {
    const page = await fetch(`${t.url}/api/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(sources).toEqual(['/api/docs/swagger-ui.css', '/api/docs/swagger-ui-bundle.js', '/api/docs/init.js']);
    for (const source of sources) {
      const file = await fetch(t.url + source);
      expect(file.status, source).toBe(200);
      expect(file.headers.get('content-type'), source).toMatch(/^text\/(css|javascript)/);
      expect((await file.text()).length, source).toBeGreaterThan(20);
    }
  });

  it('serves no file outside its fixed set', async () => {
    for (const asset of ['index.html', 'package.json', '..%2F..%2Fpackage.json', '%2e%2e', 'constructor', '__proto__']) {
      const answer = await t.fetch(`/api/docs/${asset}`);
      expect(answer.status, asset).toBe(404);
      expect(answer.body, asset).toMatchObject({ error: { code: 'not_found' } });
    }
    // A NUL byte never reaches the route: the edge refuses it for every path.
    expect((await t.fetch('/api/docs/swagger-ui.css%00.js')).status).toBe(400);
  });
});
