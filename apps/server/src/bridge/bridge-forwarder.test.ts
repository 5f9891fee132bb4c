import { describe, expect, it } from 'vitest';
import { createBridgeForwarder, type Inject, type ResolvedUpstream } from './bridge-forwarder.ts';
import { createBridgeTickets, createBridgeTokens } from './bridge-tokens.ts';

const SESSION = 'ses_own';
const OTHER = 'ses_other';

function setup(upstreams: ResolvedUpstream[] = []) {
  const tokens = createBridgeTokens();
  const binding = { sandboxId: 'sbx_1', sessionId: SESSION, principal: { role: 'agent' as const, keyId: 'key_1' } };
  const token = tokens.issue(binding);
  const injected: { method: string; url: string }[] = [];
  const inject: Inject = async (request) => {
    injected.push({ method: request.method, url: request.url });
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, rawPayload: Buffer.from('{}') };
  };
  const fetched: { url: string; authorization: string | undefined }[] = [];
  const fakeFetch = (async (url: string, init: RequestInit) => {
    fetched.push({ url, authorization: (init.headers as Record<string, string>).authorization });
    return new Response('ok', { status: 200 });
  }) as unknown as typeof fetch;
  const forward = createBridgeForwarder({
    binding,
    tokens,
    tickets: createBridgeTickets(),
    inject,
    upstreams: async () => upstreams,
    fetch: fakeFetch,
  });
  const send = (method: string, path: string) =>
    forward({ id: 'r1', method, path, headers: { authorization: `Bearer ${token}` }, body: Buffer.alloc(0) }, new AbortController().signal);
  return { send, injected, fetched };
}

const OWN_ROUTES: [string, string][] = [
  ['GET', `/api/sessions/${SESSION}`],
  ['POST', `/api/sessions/${SESSION}/exec`],
  ['GET', `/api/sessions/${SESSION}/sandbox/checkpoints`],
  ['POST', `/api/sessions/${SESSION}/sandbox/checkpoints`],
  ['POST', `/api/sessions/${SESSION}/sandbox/checkpoints/ckp_1/restore`],
  ['GET', `/api/sessions/${SESSION}/fleet/sandboxes`],
  ['POST', `/api/sessions/${SESSION}/fleet/sandboxes`],
  ['GET', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1`],
  ['POST', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/exec`],
  ['GET', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/files?path=/a`],
  ['PUT', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/files?path=/a`],
  ['POST', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/checkpoints`],
  ['POST', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/manage`],
];

describe('bridge forwarder allowlist', () => {
  it.each(OWN_ROUTES)('forwards %s %s of its own session', async (method, path) => {
    const { send, injected } = setup();
    const answer = await send(method, path);
    expect(answer.status).toBe(200);
    expect(injected).toEqual([{ method, url: path }]);
  });

  it.each(OWN_ROUTES)('refuses %s %s when it names another session', async (method, path) => {
    const { send, injected } = setup();
    const answer = await send(method, path.replace(SESSION, OTHER));
    expect(answer.status).toBe(403);
    expect(injected).toEqual([]);
  });

  it.each([
    ['DELETE', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1`],
    ['DELETE', `/api/sessions/${SESSION}/sandbox/checkpoints`],
    ['GET', '/api/fleet'],
    ['GET', '/api/bridge/upstreams'],
    ['POST', `/api/sessions/${SESSION}/sandbox/checkpoints/../restore`],
    ['POST', `/api/sessions/${SESSION}/fleet/sandboxes/rsb_1/../../x/exec`],
  ])('refuses %s %s', async (method, path) => {
    const { send, injected } = setup();
    expect((await send(method, path)).status).toBe(403);
    expect(injected).toEqual([]);
  });

  it('adds the upstream credential and only on allowed paths', async () => {
    const { send, fetched } = setup([
      { name: 'gh', baseUrl: 'https://api.example.test', allowedPaths: ['/repos/*'], credential: 'tok-secret' },
    ]);
    expect((await send('GET', '/upstreams/gh/repos/a')).status).toBe(200);
    expect(fetched).toEqual([{ url: 'https://api.example.test/repos/a', authorization: 'Bearer tok-secret' }]);
    expect((await send('GET', '/upstreams/gh/user')).status).toBe(403);
    expect((await send('GET', '/upstreams/nope/repos/a')).status).toBe(403);
    expect(fetched).toHaveLength(1);
  });
});
