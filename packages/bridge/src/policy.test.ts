import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  base64Bytes,
  bodyWithinLimit,
  compileRouteAllowlist,
  filterRequestHeaders,
  normalizeBridgePath,
  resolveUpstream,
  sanitizeResponseHeaders,
} from './policy.ts';

describe('normalizeBridgePath', () => {
  it('passes an ordinary path and splits off its query', () => {
    expect(normalizeBridgePath('/api/sessions/s1/files?path=%2Fworkspace%2Fa.txt')).toEqual({
      ok: true,
      path: '/api/sessions/s1/files',
      query: 'path=%2Fworkspace%2Fa.txt',
    });
    expect(normalizeBridgePath('/')).toEqual({ ok: true, path: '/', query: '' });
  });

  it.each([
    ['/api/../admin', 'dot_segment'],
    ['/api/./x', 'dot_segment'],
    ['/api/%2e%2e/admin', 'dot_segment'],
    ['/api/%2E%2e/admin', 'dot_segment'],
    ['/api/.%2e/admin', 'dot_segment'],
    ['/api/..', 'dot_segment'],
    ['/api//admin', 'empty_segment'],
    ['//evil.example/x', 'empty_segment'],
    ['/api/a\0b', 'nul'],
    ['/api/a%00b', 'nul'],
    ['/api\\admin', 'backslash'],
    ['/api/%5cadmin', 'backslash'],
    ['/api/a%2fb', 'encoded_separator'],
    ['/api/%252e%252e/admin', 'double_encoded'],
    ['/api/a b', 'bad_character'],
    ['/api/é', 'bad_character'],
    ['/api/x#frag', 'bad_character'],
    ['api/x', 'not_absolute'],
    ['?x', 'not_absolute'],
  ])('refuses %s (%s)', (path, reason) => {
    expect(normalizeBridgePath(path)).toEqual({ ok: false, reason });
  });
});

describe('compileRouteAllowlist', () => {
  const routes = compileRouteAllowlist(
    ['GET /api/sessions/:sessionId/files', 'POST /api/sessions/:sessionId/sandboxes/:sandboxId/exec', 'GET /api/health'],
    { sessionId: 'ses_1' },
  );

  it('matches the method and path of the sandbox’s own session', () => {
    expect(routes.match('GET', '/api/sessions/ses_1/files?path=x')).toEqual({
      pattern: 'GET /api/sessions/:sessionId/files',
      params: { sessionId: 'ses_1' },
    });
    expect(routes.match('POST', '/api/sessions/ses_1/sandboxes/sbx-9/exec')?.params).toEqual({ sessionId: 'ses_1', sandboxId: 'sbx-9' });
    expect(routes.match('GET', '/api/health')?.pattern).toBe('GET /api/health');
  });

  it('never matches another session, another method, a longer path or a tricked one', () => {
    expect(routes.match('GET', '/api/sessions/ses_2/files')).toBeNull();
    expect(routes.match('DELETE', '/api/sessions/ses_1/files')).toBeNull();
    expect(routes.match('GET', '/api/sessions/ses_1/files/extra')).toBeNull();
    expect(routes.match('GET', '/api/sessions/ses_1/../ses_2/files')).toBeNull();
    expect(routes.match('GET', '/api/sessions/ses_1%2f..%2fses_2/files')).toBeNull();
    expect(routes.match('GET', '/api/sessions/ses_2%00/files')).toBeNull();
    expect(routes.match('POST', '/api/sessions/ses_1/sandboxes/a%20b/exec')).toBeNull();
  });

  it('refuses a malformed pattern when it is compiled', () => {
    expect(() => compileRouteAllowlist(['/api/x'], { sessionId: 's' })).toThrow(/METHOD \/path/);
  });
});

describe('headers', () => {
  it('keeps allowlisted request headers and never a credential, whatever the list says', () => {
    const headers = {
      accept: 'application/json',
      authorization: 'Bearer inside-token',
      cookie: 'sandcast_session=x',
      'x-forwarded-for': '10.0.0.1',
      'x-custom': 'y',
      'content-type': 'text/plain',
      'content-length': '5',
    };
    expect(filterRequestHeaders(headers)).toEqual({ accept: 'application/json', 'content-type': 'text/plain' });
    expect(filterRequestHeaders(headers, ['authorization', 'cookie', 'x-custom'])).toEqual({ 'x-custom': 'y' });
    expect(filterRequestHeaders({ accept: 'a\r\nx-evil: 1' })).toEqual({});
  });

  it('cleans response headers into what a frame carries', () => {
    expect(
      sanitizeResponseHeaders({
        'Content-Type': 'application/json',
        'Set-Cookie': 'a=b',
        'Transfer-Encoding': 'chunked',
        'X-Bad Name': 'v',
        'x-ok': 'a\nb',
      }),
    ).toEqual({ 'content-type': 'application/json' });
  });
});

describe('body limit', () => {
  it('counts base64 bytes without decoding', () => {
    expect(base64Bytes('')).toBe(0);
    expect(base64Bytes('YQ==')).toBe(1);
    expect(base64Bytes('YWI=')).toBe(2);
    expect(base64Bytes('YWJj')).toBe(3);
    expect(bodyWithinLimit(Buffer.alloc(10).toString('base64'), 10)).toBe(true);
    expect(bodyWithinLimit(Buffer.alloc(11).toString('base64'), 10)).toBe(false);
    expect(bodyWithinLimit(new Uint8Array(1024 * 1024 + 1))).toBe(false);
  });
});

describe('resolveUpstream', () => {
  const upstreams = [
    { name: 'llm', baseUrl: 'https://llm.example.com/api/', allowedPaths: ['/v1/chat/completions', '/v1/models/*'] },
    { name: 'git', baseUrl: 'http://127.0.0.1:8080', allowedPaths: ['/repos/*'] },
  ];

  it('joins the base URL, its path prefix kept, with the allowed rest and the query', () => {
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/chat/completions?stream=true')).toEqual({
      ok: true,
      upstream: 'llm',
      url: 'https://llm.example.com/api/v1/chat/completions?stream=true',
    });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/gpt')).toMatchObject({
      ok: true,
      url: 'https://llm.example.com/api/v1/models/gpt',
    });
    expect(resolveUpstream(upstreams, '/upstreams/git/repos/a/b')).toMatchObject({ ok: true, url: 'http://127.0.0.1:8080/repos/a/b' });
  });

  it('refuses unknown upstreams, paths outside the list and every escape', () => {
    expect(resolveUpstream(upstreams, '/upstreams/nope/v1')).toEqual({ ok: false, reason: 'unknown_upstream' });
    expect(resolveUpstream(upstreams, '/api/sessions')).toEqual({ ok: false, reason: 'unknown_upstream' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/embeddings')).toEqual({ ok: false, reason: 'path_not_allowed' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/')).toEqual({ ok: false, reason: 'path_not_allowed' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models')).toEqual({ ok: false, reason: 'path_not_allowed' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/../../admin')).toEqual({ ok: false, reason: 'dot_segment' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/%2e%2e/x')).toEqual({ ok: false, reason: 'dot_segment' });
    expect(resolveUpstream(upstreams, '/upstreams/llm//evil.example/v1')).toEqual({ ok: false, reason: 'empty_segment' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/a\\b')).toEqual({ ok: false, reason: 'backslash' });
    expect(resolveUpstream(upstreams, '/upstreams/llm/v1/models/a%00')).toEqual({ ok: false, reason: 'nul' });
  });
});

describe('the policy under fuzzing', () => {
  const pathChars = fc.constantFrom('/', '.', '%', '2', 'e', 'E', 'f', '5', 'c', '0', '\\', 'a', 's', '_', '1', '?', '#', ' ', '\0');
  const hostilePath = fc.array(pathChars, { maxLength: 40 }).map((chars) => chars.join(''));
  const prefixed = fc.tuple(fc.constantFrom('/api/sessions/', '/upstreams/llm/v1/models/', '/'), hostilePath).map(([a, b]) => a + b);

  const decodedSegments = (path: string) =>
    path
      .slice(1)
      .split('/')
      .map((segment) => {
        try {
          return decodeURIComponent(segment);
        } catch {
          return segment;
        }
      });

  it('never passes a path that decodes to a dot segment, a double slash, a backslash or NUL', () => {
    fc.assert(
      fc.property(prefixed, (raw) => {
        const checked = normalizeBridgePath(raw);
        if (!checked.ok) return;
        expect(checked.path.includes('//')).toBe(false);
        for (const segment of decodedSegments(checked.path)) {
          expect(segment === '.' || segment === '..').toBe(false);
          expect(/[\\\0/]/.test(segment)).toBe(false);
        }
      }),
      { numRuns: 2000, seed: 61 },
    );
  });

  it('matches :sessionId to the bound session only, and upstream URLs stay under their base', () => {
    const routes = compileRouteAllowlist(['GET /api/sessions/:sessionId/files', 'GET /api/sessions/:sessionId'], { sessionId: 'ses_1' });
    const upstreams = [{ name: 'llm', baseUrl: 'https://llm.example.com/api/', allowedPaths: ['/v1/models/*'] }];
    fc.assert(
      fc.property(prefixed, (raw) => {
        const match = routes.match('GET', raw);
        if (match) expect(match.params.sessionId).toBe('ses_1');
        const upstream = resolveUpstream(upstreams, raw);
        if (upstream.ok) expect(upstream.url.startsWith('https://llm.example.com/api/v1/models/')).toBe(true);
      }),
      { numRuns: 2000, seed: 62 },
    );
  });
});
