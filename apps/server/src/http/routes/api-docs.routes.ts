import { createReadStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_PATHS } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi/openapi-document.ts';
import type { RouteEntry } from '../route-entry.ts';
import { HTML_HEADERS } from '../web-ui.ts';

/** swagger-ui-dist's folder, from this installation: the docs page loads nothing from elsewhere. */
const SWAGGER_UI_DIR = path.dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')));

/** Starts Swagger UI on the page; a file, because the page's CSP allows no inline script. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '${API_PATHS.openApiDocument}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** The only files `/api/docs/:asset` serves: a fixed map, so no request names a path on disk. */
const ASSETS: Record<string, { type: string; file?: string; text?: string }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'init.js': { type: 'text/javascript; charset=utf-8', text: INIT_SCRIPT },
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandcast API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${API_PATHS.apiDocs}/swagger-ui.css">
</head><body><div id="swagger-ui"></div>
<script src="${API_PATHS.apiDocs}/swagger-ui-bundle.js"></script>
<script src="${API_PATHS.apiDocs}/init.js"></script>
</body></html>`;

/**
 * The API description: `GET /api/openapi.json` (generated from the contracts and the routes'
 * declared access on first request, when every route is registered) and `GET /api/docs`, Swagger
 * UI served from our own copy of swagger-ui-dist. Both are public: the document describes the
 * API of this version, the same for every installation, and holds no instance state.
 */
export function registerApiDocsRoutes(app: FastifyInstance, deps: { routes: readonly RouteEntry[]; version: string }): void {
  const config = { access: 'public' } as const;
  let document: string | undefined;

  app.get(API_PATHS.openApiDocument, { config }, async (_request, reply) => {
    document ??= JSON.stringify(buildOpenApiDocument(deps));
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(document);
  });

  app.get(API_PATHS.apiDocs, { config }, async (_request, reply) =>
    reply.headers(HTML_HEADERS).type('text/html; charset=utf-8').send(PAGE),
  );

  app.get<{ Params: { asset: string } }>(API_PATHS.apiDocsAsset, { config }, async (request, reply) => {
    const asset = Object.hasOwn(ASSETS, request.params.asset) ? ASSETS[request.params.asset] : undefined;
    if (!asset) {
      throw new SandcastError(
        'not_found',
        `no documentation file "${request.params.asset.slice(0, 100)}"; the page is at ${API_PATHS.apiDocs}`,
      );
    }
    reply.type(asset.type).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff');
    return reply.send(asset.file ? createReadStream(path.join(SWAGGER_UI_DIR, asset.file)) : asset.text);
  });
}
