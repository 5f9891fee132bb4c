import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { API_PATHS, BuildBaseImageBodySchema, type ImageOperationLine, ImportBaseImageQuerySchema } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { BaseImageInfo, BaseImageStore } from '@sandcast/provider-sdk';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { toErrorResponse } from '../error-handler.ts';
import { parse } from '../validate.ts';

/** The largest archive an import accepts. */
const MAX_IMPORT_BYTES = 64 * 1024 ** 3;

type ProviderParams = { provider: string };
type ImageParams = { provider: string; image: string };

/**
 * Streams a long operation as NDJSON: progress lines while it runs, then `done` or `error`.
 * Errors after the answer started travel as the last line, in the usual envelope's words.
 */
function streamOperation(reply: FastifyReply, run: (progress: (phase: string, fraction?: number) => void) => Promise<BaseImageInfo>) {
  const out = new PassThrough();
  const write = (line: ImageOperationLine) => out.write(`${JSON.stringify(line)}\n`);
  run((phase, fraction) => write({ type: 'progress', phase, ...(fraction === undefined ? {} : { fraction }) }))
    .then((image) => write({ type: 'done', image }))
    .catch((error: unknown) => {
      const { body } = toErrorResponse(error);
      write({ type: 'error', error: { code: body.error.code, message: body.error.message } });
    })
    .finally(() => out.end());
  return reply.header('content-type', 'application/x-ndjson').header('cache-control', 'no-store').send(out);
}

export function registerBaseImageRoutes(app: FastifyInstance, deps: { providers: ProviderRegistry; dataDir: string }): void {
  const config = { access: 'admin' } as const;

  const storeOf = (id: string): BaseImageStore => {
    const registered = deps.providers.get(id);
    if (!registered) throw new SandcastError('not_found', `no provider ${id}; GET /api/sandbox-targets lists them`);
    const store = registered.provider.baseImages;
    if (!store) throw new SandcastError('capability_unsupported', `the ${id} provider does not keep base images of its own`);
    return store;
  };

  // Archives arrive as raw streams; the import route writes them to disk as they come.
  app.addContentTypeParser(['application/x-tar', 'application/octet-stream'], (_request, payload, done) => done(null, payload));

  app.get<{ Params: ProviderParams }>(API_PATHS.baseImages, { config }, async (request) => ({
    images: await storeOf(request.params.provider).list(),
  }));

  app.post<{ Params: ProviderParams }>(API_PATHS.baseImageImport, { config }, async (request, reply) => {
    const store = storeOf(request.params.provider);
    const { name } = parse(ImportBaseImageQuerySchema, request.query, 'query');
    const body = request.body as Readable | undefined;
    if (!body || typeof (body as Readable).pipe !== 'function') {
      throw new SandcastError('unsupported_media_type', 'send the archive as the request body with Content-Type: application/x-tar');
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_IMPORT_BYTES)
      throw new SandcastError('payload_too_large', `archives up to ${MAX_IMPORT_BYTES / 1024 ** 3} GiB are accepted`);
    const dir = path.join(deps.dataDir, 'tmp');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `import-${randomUUID()}.tar`);
    let received = 0;
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_IMPORT_BYTES) body.destroy(new SandcastError('payload_too_large', 'the archive is larger than the import limit'));
    });
    try {
      await pipeline(body, createWriteStream(file, { mode: 0o600 }));
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    return streamOperation(reply, async (progress) => {
      progress('received', 0);
      try {
        return await store.importArchive(file, name, (p) => progress(p.phase, p.fraction));
      } finally {
        await rm(file, { force: true });
      }
    });
  });

  app.post<{ Params: ProviderParams }>(API_PATHS.baseImageBuild, { config }, async (request, reply) => {
    const store = storeOf(request.params.provider);
    const recipe = parse(BuildBaseImageBodySchema, request.body);
    return streamOperation(reply, (progress) => store.build(recipe, (p) => progress(p.phase, p.fraction)));
  });

  app.get<{ Params: ImageParams }>(API_PATHS.baseImageExport, { config }, async (request, reply) => {
    const archive = await storeOf(request.params.provider).export(request.params.image);
    return reply
      .header('content-type', 'application/x-tar')
      .header('content-disposition', `attachment; filename="${request.params.image.replace(/[^A-Za-z0-9._-]/g, '_')}.tar"`)
      .send(archive);
  });

  app.delete<{ Params: ImageParams }>(API_PATHS.baseImage, { config }, async (request) => {
    await storeOf(request.params.provider).remove(request.params.image);
    return { removed: request.params.image };
  });
}
