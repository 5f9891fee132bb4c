import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ActivityQuerySchema,
  AgentListQuerySchema,
  API_PATHS,
  BuildBaseImageBodySchema,
  CancelSetupBodySchema,
  CreateAgentBodySchema,
  CreateApiKeyBodySchema,
  CreateCheckpointBodySchema,
  CreateConnectionBodySchema,
  CreateEnvironmentBodySchema,
  CreateFleetSandboxBodySchema,
  CreateSandboxBodySchema,
  DisableQuerySchema,
  ErrorEnvelopeSchema,
  ExecBodySchema,
  FinishSetupBodySchema,
  FleetOverviewQuerySchema,
  ForkSandboxBodySchema,
  ImportBaseImageQuerySchema,
  InstanceSettingsPatchSchema,
  LoginBodySchema,
  ManageFleetSandboxBodySchema,
  OpenPortBodySchema,
  PutBridgeUpstreamBodySchema,
  RelinkBodySchema,
  SESSION_TOOLS,
  SessionFileQuerySchema,
  StartSessionBodySchema,
  StartSetupSessionBodySchema,
  TerminalSocketQuerySchema,
  UpdateAgentBodySchema,
  UpdateApiKeyBodySchema,
  UpdateConnectionBodySchema,
  UpdateEnvironmentBodySchema,
  WriteSessionFileBodySchema,
} from '@sandcast/contracts';
import { testDatabases } from '@sandcast/db/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { z } from 'zod';
import type { TestServer } from '../integration/support/harness.ts';
import { attack, startHostileServer } from './support/attack.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

/** Runs per route and the time one route's property may take; the whole file stays well under a minute. */
const RUNS_PER_ROUTE = Number(process.env.SANDCAST_FUZZ_RUNS ?? 12);
const TIME_PER_ROUTE_MS = 1_500;

interface RouteContract {
  body?: z.ZodType;
  query?: z.ZodType;
}

/**
 * Every registered route and the contract its handler parses. A route that is registered but
 * missing here fails the suite: add its row (with its body/query schema) so it is fuzzed too.
 */
const CONTRACTS: Record<string, RouteContract> = {
  [`GET ${API_PATHS.health}`]: {},
  [`GET ${API_PATHS.openApiDocument}`]: {},
  [`GET ${API_PATHS.apiDocs}`]: {},
  [`GET ${API_PATHS.apiDocsAsset}`]: {},
  [`GET ${API_PATHS.metrics}`]: {},
  [`GET ${API_PATHS.authSession}`]: {},
  [`POST ${API_PATHS.authSession}`]: { body: LoginBodySchema },
  [`DELETE ${API_PATHS.authSession}`]: {},
  [`GET ${API_PATHS.instanceSettings}`]: {},
  [`PATCH ${API_PATHS.instanceSettings}`]: { body: InstanceSettingsPatchSchema },
  [`GET ${API_PATHS.environments}`]: {},
  [`POST ${API_PATHS.environments}`]: { body: CreateEnvironmentBodySchema },
  [`GET ${API_PATHS.environment}`]: {},
  [`PATCH ${API_PATHS.environment}`]: { body: UpdateEnvironmentBodySchema },
  [`DELETE ${API_PATHS.environment}`]: {},
  [`GET ${API_PATHS.environmentRevisions}`]: {},
  [`GET ${API_PATHS.sandboxTargets}`]: {},
  [`GET ${API_PATHS.connections}`]: {},
  [`POST ${API_PATHS.connections}`]: { body: CreateConnectionBodySchema },
  [`GET ${API_PATHS.connection}`]: {},
  [`PATCH ${API_PATHS.connection}`]: { body: UpdateConnectionBodySchema },
  [`DELETE ${API_PATHS.connection}`]: {},
  [`POST ${API_PATHS.connectionTest}`]: {},
  [`GET ${API_PATHS.activity}`]: { query: ActivityQuerySchema },
  [`GET ${API_PATHS.apiKeys}`]: {},
  [`POST ${API_PATHS.apiKeys}`]: { body: CreateApiKeyBodySchema },
  [`PATCH ${API_PATHS.apiKey}`]: { body: UpdateApiKeyBodySchema },
  [`DELETE ${API_PATHS.apiKey}`]: {},
  [`GET ${API_PATHS.customImageOverview}`]: {},
  [`DELETE ${API_PATHS.customImageOverview}`]: { query: DisableQuerySchema },
  [`GET ${API_PATHS.customImageTemplates}`]: {},
  [`POST ${API_PATHS.customImageRollback}`]: {},
  [`POST ${API_PATHS.customImageRelink}`]: { body: RelinkBodySchema },
  [`POST ${API_PATHS.environmentProbe}`]: {},
  [`POST ${API_PATHS.setupSessions}`]: { body: StartSetupSessionBodySchema },
  [`GET ${API_PATHS.setupSession}`]: {},
  [`GET ${API_PATHS.setupSessionChanges}`]: {},
  [`POST ${API_PATHS.setupSessionExec}`]: { body: ExecBodySchema },
  [`POST ${API_PATHS.setupSessionFinish}`]: { body: FinishSetupBodySchema },
  [`POST ${API_PATHS.setupSessionCancel}`]: { body: CancelSetupBodySchema },
  [`POST ${API_PATHS.terminalSessionToken}`]: {},
  [`GET ${API_PATHS.terminalSocket}`]: { query: TerminalSocketQuerySchema },
  [`GET ${API_PATHS.baseImages}`]: {},
  [`POST ${API_PATHS.baseImageImport}`]: { query: ImportBaseImageQuerySchema },
  [`POST ${API_PATHS.baseImageBuild}`]: { body: BuildBaseImageBodySchema },
  [`DELETE ${API_PATHS.baseImage}`]: {},
  [`GET ${API_PATHS.baseImageExport}`]: {},
  [`GET ${API_PATHS.sandboxes}`]: {},
  [`POST ${API_PATHS.sandboxes}`]: { body: CreateSandboxBodySchema },
  [`GET ${API_PATHS.sandbox}`]: {},
  [`DELETE ${API_PATHS.sandbox}`]: {},
  [`POST ${API_PATHS.sandboxExec}`]: { body: ExecBodySchema },
  [`POST ${API_PATHS.sandboxStop}`]: {},
  [`POST ${API_PATHS.sandboxFork}`]: { body: ForkSandboxBodySchema },
  [`GET ${API_PATHS.environmentWarmPool}`]: {},
  [`GET ${API_PATHS.bridgeUpstreams}`]: {},
  [`PUT ${API_PATHS.bridgeUpstream}`]: { body: PutBridgeUpstreamBodySchema },
  [`DELETE ${API_PATHS.bridgeUpstream}`]: {},
  [`POST ${API_PATHS.sandboxStart}`]: {},
  [`POST ${API_PATHS.sessionSandboxStop}`]: {},
  [`POST ${API_PATHS.sessionSandboxStart}`]: {},
  [`GET ${API_PATHS.sandboxPorts}`]: {},
  [`POST ${API_PATHS.sandboxPorts}`]: { body: OpenPortBodySchema },
  [`GET ${API_PATHS.sandboxPortUrl}`]: {},
  [`DELETE ${API_PATHS.sandboxPort}`]: {},
  [`GET ${API_PATHS.setupSessionPorts}`]: {},
  [`POST ${API_PATHS.setupSessionPorts}`]: { body: OpenPortBodySchema },
  [`GET ${API_PATHS.setupSessionPortUrl}`]: {},
  [`DELETE ${API_PATHS.setupSessionPort}`]: {},
  [`GET ${API_PATHS.agents}`]: { query: AgentListQuerySchema },
  [`POST ${API_PATHS.agents}`]: { body: CreateAgentBodySchema },
  [`GET ${API_PATHS.agent}`]: {},
  [`PATCH ${API_PATHS.agent}`]: { body: UpdateAgentBodySchema },
  [`DELETE ${API_PATHS.agent}`]: {},
  [`GET ${API_PATHS.agentVersions}`]: {},
  [`GET ${API_PATHS.sessions}`]: {},
  [`POST ${API_PATHS.sessions}`]: { body: StartSessionBodySchema },
  [`GET ${API_PATHS.session}`]: {},
  [`POST ${API_PATHS.sessionEnd}`]: {},
  [`GET ${API_PATHS.sessionSandbox}`]: {},
  [`POST ${API_PATHS.sessionExec}`]: { body: ExecBodySchema },
  [`GET ${API_PATHS.sessionFiles}`]: { query: SessionFileQuerySchema },
  [`PUT ${API_PATHS.sessionFiles}`]: { query: SessionFileQuerySchema, body: WriteSessionFileBodySchema },
  [`POST ${API_PATHS.sessionPtyToken}`]: {},
  [`GET ${API_PATHS.sessionTerminalSocket}`]: { query: TerminalSocketQuerySchema },
  [`GET ${API_PATHS.sessionCheckpoints}`]: {},
  [`POST ${API_PATHS.sessionCheckpoints}`]: { body: CreateCheckpointBodySchema },
  [`POST ${API_PATHS.sessionCheckpointRestore}`]: { body: CreateCheckpointBodySchema },
  [`GET ${API_PATHS.sessionTools}`]: {},
  [`POST ${API_PATHS.sessionTool}`]: { body: SESSION_TOOLS.sandbox_exec.input },
  [`GET ${API_PATHS.fleetSandboxes}`]: {},
  [`POST ${API_PATHS.fleetSandboxes}`]: { body: CreateFleetSandboxBodySchema },
  [`GET ${API_PATHS.fleetSandbox}`]: {},
  [`POST ${API_PATHS.fleetSandboxExec}`]: { body: ExecBodySchema },
  [`GET ${API_PATHS.fleetSandboxFiles}`]: { query: SessionFileQuerySchema },
  [`PUT ${API_PATHS.fleetSandboxFiles}`]: { query: SessionFileQuerySchema, body: WriteSessionFileBodySchema },
  [`POST ${API_PATHS.fleetSandboxCheckpoints}`]: {},
  [`POST ${API_PATHS.fleetSandboxManage}`]: { body: ManageFleetSandboxBodySchema },
  [`GET ${API_PATHS.fleet}`]: { query: FleetOverviewQuerySchema },
  [`POST ${API_PATHS.mcp}`]: {},
  [`GET ${API_PATHS.mcp}`]: {},
  [`DELETE ${API_PATHS.mcp}`]: {},
  'GET /*': {},
};

// ---- adversarial values ---------------------------------------------------------------------

const nasty = fc.constantFrom(
  '',
  '\0',
  'a\0b',
  '\ud800',
  'x\udc00y',
  '..',
  '../../../../etc/passwd',
  '/../../../../tmp/x',
  '%00',
  '%2e%2e%2f',
  '__proto__',
  'constructor',
  '$(id)',
  '`id`',
  ';rm -rf /',
  '\n\r\t',
  '😀',
  '\u202e',
  'x'.repeat(70_000),
  'A'.repeat(900_000),
);
const nastyNumber = fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 1, 0.5, -0.0, 4_294_967_296, 86_401);
const deepNesting = fc.integer({ min: 50, max: 800 }).map((depth) => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { n: value };
  return value;
});
const anyJson = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: nasty },
  { weight: 1, arbitrary: nastyNumber },
  { weight: 1, arbitrary: deepNesting },
);

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/**
 * An arbitrary shaped like the zod schema, where any leaf may instead be a wrong type or an
 * adversarial value: enough valid structure to get past the first check, enough hostility to
 * reach the ones after it.
 */
function shaped(schema: unknown, key = ''): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const wrong = fc.oneof(nasty, nastyNumber, fc.jsonValue({ maxDepth: 2 }));
  const leaf = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: wrong });
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'nullable':
      return fc.oneof(fc.constant(undefined), shaped(def.innerType, key));
    case 'pipe':
      return shaped(def.in, key);
    case 'object': {
      const shape = (schema as { shape: Record<string, unknown> }).shape;
      const fields = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, shaped(v, k)]));
      return fc.oneof(
        { weight: 5, arbitrary: fc.record(fields, { requiredKeys: [] }) },
        { weight: 1, arbitrary: fc.record({ ...fields, unexpected: anyJson }, { requiredKeys: [] }) },
        { weight: 1, arbitrary: wrong },
      );
    }
    case 'array':
      if (key === 'command') return leaf(safeCommand);
      return leaf(fc.array(shaped(def.element), { maxLength: 5 }));
    case 'record':
      return leaf(fc.dictionary(fc.oneof(fc.string(), nasty), shaped(def.valueType), { maxKeys: 5 }));
    case 'enum':
      return leaf(fc.constantFrom(...Object.values(def.entries as Record<string, unknown>)));
    case 'literal':
      return leaf(fc.constantFrom(...(def.values as unknown[])));
    case 'string':
      return leaf(fc.oneof(fc.string(), nasty));
    case 'number':
      return leaf(fc.oneof(fc.integer(), nastyNumber, fc.double({ noNaN: true, noDefaultInfinity: true })));
    case 'boolean':
      return leaf(fc.boolean());
    default:
      return anyJson;
  }
}

/**
 * Exec bodies run on the host through the fake provider, so the program is never one that could
 * touch anything: a harmless builtin, a missing file, or a refused value.
 */
const safeCommand = fc
  .tuple(
    fc.constantFrom('true', 'echo', '/nonexistent/sandcast-fuzz', '\0', '\ud800', 'x'.repeat(70_000)),
    fc.array(fc.oneof(fc.string(), nasty), { maxLength: 4 }),
  )
  .map(([program, args]) => [program, ...args]);

// ---- path params and query strings ---------------------------------------------------------

/** Percent-encodes text; a lone surrogate (which encodeURIComponent refuses) goes as its raw UTF-8 form. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

function pathParam(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
    { weight: 2, arbitrary: nasty.filter((s) => s.length > 0 && s.length < 10_000) },
  );
}

/** Raw path segments, some deliberately malformed percent-encoding. */
const rawSegment = fc.constantFrom('%00', '%ED%A0%80', '%FF', '%', '%zz', '..', '%2e%2e', 'a%2Fb');

function queryString(schema: z.ZodType | undefined): fc.Arbitrary<string> {
  const keys = schema ? Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape) : [];
  const key = fc.oneof(...(keys.length ? [fc.constantFrom(...keys)] : []), fc.string({ maxLength: 8 }), fc.constant('__proto__'));
  const value = fc.oneof(
    fc.string({ maxLength: 20 }),
    nasty.filter((s) => s.length < 2_000),
    fc.integer().map(String),
  );
  const encoded = fc
    .array(fc.tuple(key, value), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&'));
  return fc.oneof({ weight: 4, arbitrary: encoded }, { weight: 1, arbitrary: rawSegment.map((s) => `a=${s}&${s}=1`) });
}

/** Bodies: schema-shaped, any JSON, or not JSON at all. */
function bodyOf(schema: z.ZodType | undefined): fc.Arbitrary<string | undefined> {
  const json = (arb: fc.Arbitrary<unknown>) => arb.map((v) => (v === undefined ? undefined : JSON.stringify(v)));
  return fc.oneof(
    { weight: schema ? 6 : 1, arbitrary: json(schema ? shaped(schema) : anyJson) },
    { weight: 2, arbitrary: json(anyJson) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"a":',
        '{"a":"\\ud800"}',
        '{"\\u0000":1}',
        '{"__proto__":{"admin":true}}',
        `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
        'null',
        '"just a string"',
        '1e999999',
      ),
    },
  );
}

// ---- the suite -------------------------------------------------------------------------------

describe('hostile: fuzzing every JSON route from its contract', () => {
  let t: TestServer;
  const real: Record<string, string[]> = {};
  let fileSession = '';
  let webDist = '';
  beforeAll(async () => {
    // A built UI, so the page route is fuzzed rather than answering "not built".
    webDist = await mkdtemp(path.join(tmpdir(), 'sandcast-fuzz-web-'));
    await mkdir(path.join(webDist, 'assets'));
    await writeFile(path.join(webDist, 'index.html'), '<!doctype html><title>Sandcast</title>');
    await writeFile(path.join(webDist, 'assets', 'x.js'), 'export {};');
    t = await startHostileServer({ database: pglite, env: { SANDCAST_WEB_DIST: webDist } });
    await t.client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await t.client.environments.create({ name: 'fuzz', provider: 'fake', config: {} });
    const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
    const setup = await t.client.customImages.startSetup(env.id);
    const key = await t.client.keys.create({ name: 'fuzz', role: 'agent' });
    // A Daytona connection to a port nothing listens on: its test answers at once, with the reason.
    const connection = await t.client.connections.create({
      name: 'fuzz-daytona',
      provider: 'daytona',
      config: { apiUrl: 'http://127.0.0.1:9/api' },
      secrets: { apiKey: 'fuzz-key' },
    });
    const agent = await t.client.agents.create({
      name: 'fuzz',
      sandboxPolicy: { mode: 'configurable', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
    });
    const session = await t.client.sessions.start({ agentId: agent.id });
    fileSession = session.id;
    real.id = [env.id, sandbox.id, key.key.id, connection.id, agent.id, session.id];
    real.environmentId = [env.id];
    real.sessionId = [setup.session.id];
    real.provider = ['fake', 'no-such-provider'];
    real.image = ['fake-base'];
    real['*'] = ['index.html', 'assets/x.js'];
  });
  afterAll(async () => {
    await t?.close();
    await rm(webDist, { recursive: true, force: true });
  });

  attack('every registered route has a contract row here', () => {
    const registered = t.server.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`);
    const missing = registered.filter((r) => !(r in CONTRACTS));
    expect(missing, 'add these routes to CONTRACTS in tests/hostile/fuzz-routes.test.ts').toEqual([]);
  });

  // Destructive routes last, so the fixtures live while the others are fuzzed.
  const order = Object.keys(CONTRACTS).sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')));
  for (const route of order) {
    attack(`${route}: random and adversarial input never gets a 5xx, and every refusal is the error envelope`, async () => {
      const [method, template] = route.split(' ') as [string, string];
      const contract = CONTRACTS[route]!;
      const names = [...template.matchAll(/:([A-Za-z]+)|\*/g)].map((m) => m[1] ?? '*');
      const params = fc.record(Object.fromEntries(names.map((n) => [n, pathParam(real[n] ?? ['x'])])));
      const rawParam = fc.option(rawSegment, { freq: 4 });
      let ran = 0;
      await fc.assert(
        fc.asyncProperty(
          params,
          rawParam,
          queryString(contract.query),
          bodyOf(method === 'GET' ? undefined : contract.body),
          async (p, raw, query, body) => {
            ran++;
            let path = template;
            for (const [name, value] of Object.entries(p)) {
              const encoded = raw ?? encode(value);
              path = path.replace(name === '*' ? '*' : `:${name}`, encoded);
            }
            const sendsBody = method !== 'GET' && method !== 'HEAD' && body !== undefined;
            const res = await fetch(`${t.url}${path}${query ? `?${query}` : ''}`, {
              method,
              headers: sendsBody ? { 'content-type': 'application/json' } : {},
              body: sendsBody ? body : undefined,
            });
            const text = await res.text();
            expect(res.status, `${method} ${path.slice(0, 200)} answered ${res.status}: ${text.slice(0, 300)}`).toBeLessThan(500);
            if (res.status >= 400) {
              const parsed = ErrorEnvelopeSchema.safeParse(JSON.parse(text));
              expect(parsed.success, `${method} ${path.slice(0, 200)} refused without the envelope: ${text.slice(0, 300)}`).toBe(true);
            }
            // Keep the fixtures' feature switch on: a fuzzed PATCH may have turned it off.
            if (route === `PATCH ${API_PATHS.instanceSettings}`)
              await t.client.settings.update({ experimental: { enableEnvironments: true } });
          },
        ),
        { numRuns: RUNS_PER_ROUTE, interruptAfterTimeLimit: TIME_PER_ROUTE_MS, markInterruptAsFailure: false },
      );
      expect(ran).toBeGreaterThan(0);
    });
  }

  attack('session file paths: `..`, NUL, relative, huge and a body over the limit are clear 4xx, never a 5xx', async () => {
    const url = (p: string) => `${t.url}/api/sessions/${fileSession}/files?path=${encode(p)}`;
    const write = (p: string, body: unknown) =>
      fetch(url(p), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const bad of ['/workspace/../../etc/passwd', '../etc/passwd', 'relative/file', '/work\0space', `/${'a'.repeat(5000)}`, '']) {
      const read = await fetch(url(bad));
      expect(read.status, `GET ${bad.slice(0, 50)}`).toBe(400);
      // A NUL is refused by the HTTP edge (bad_request), the rest by the path rules.
      expect(['validation_failed', 'bad_request']).toContain((await read.json()).error.code);
      expect((await write(bad, { content: 'x' })).status, `PUT ${bad.slice(0, 50)}`).toBe(400);
    }
    const big = await write('/workspace/big', { content: 'A'.repeat(800 * 1024) });
    expect(big.status).toBe(413);
    expect((await big.json()).error.code).toBe('payload_too_large');
    const huge = await write('/workspace/huge', { content: 'A'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    const notBase64 = await write('/workspace/b64', { content: 'not base64!', encoding: 'base64' });
    expect(notBase64.status).toBe(400);
  });

  attack('the server still answers after the fuzzing', async () => {
    expect(await t.client.health()).toMatchObject({ ok: true });
  });
});
