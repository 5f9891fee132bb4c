import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** What the catch-all route is called in the route table (docs/spec/http-api.md lists it). */
const WEB_UI_ROUTE = '/*';

/** Headers of every HTML page the server sends: no framing, no foreign script. */
export const HTML_HEADERS = {
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // Styles may be inline (the terminal and toasts set element styles); scripts only from here.
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'",
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandcast</title>
<style>body{font:15px/1.5 system-ui,sans-serif;background:#0b0d10;color:#e6e8eb;max-width:40rem;margin:4rem auto;padding:0 1rem}code{background:#1b1f24;padding:.1rem .3rem;border-radius:4px}</style>
</head><body><h1>The Sandcast web UI is not built</h1>
<p>The API is running under <code>/api</code>. To get the UI, build it and reload this page:</p>
<p><code>npm run build -w apps/web</code></p>
<p><code>scripts/start.sh</code> does this for you when the build is missing or older than the sources.</p>
</body></html>`;

/**
 * Serves the built web UI from `distDir` at `/`: files as they are (hashed assets cached for a
 * year), every other non-API path gets index.html so the client-side router can take it. Paths
 * under /api/ never fall back to the page; they answer the API's 404 envelope.
 */
export function registerWebUi(app: FastifyInstance, deps: { distDir: string }): void {
  const distDir = path.resolve(deps.distDir);
  void app.register(fastifyStatic, { serve: false, root: distDir, decorateReply: true, index: false, dotfiles: 'deny' });

  const sendIndex = (reply: FastifyReply) => reply.headers(HTML_HEADERS).sendFile('index.html', distDir, { cacheControl: false });

  app.get<{ Params: { '*': string } }>(WEB_UI_ROUTE, { config: { access: 'public' } }, async (request, reply) => {
    const wanted = request.params['*'] ?? '';
    if (wanted === 'api' || wanted.startsWith('api/')) return reply.callNotFound();
    if (!existsSync(path.join(distDir, 'index.html'))) {
      return reply.status(503).headers(HTML_HEADERS).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    }
    if (wanted === '' || wanted === 'index.html') return sendIndex(reply);
    const file = path.resolve(distDir, wanted);
    const inside = file.startsWith(distDir + path.sep);
    if (path.extname(wanted) !== '') {
      if (!inside || !existsSync(file)) return reply.callNotFound();
      const immutable = wanted.startsWith('assets/');
      return reply.sendFile(wanted, distDir, immutable ? { maxAge: '365d', immutable: true } : { cacheControl: false });
    }
    return sendIndex(reply);
  });
}
