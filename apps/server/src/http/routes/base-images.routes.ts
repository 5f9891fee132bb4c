import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { API_PATHS, BuildBaseImageBodySchema, type ImageOperationLine, ImportBaseImageQuerySchema } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { BaseImageInfo, BaseImageProgress } from '@sandcast/provider-sdk';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BaseImagesService, ReceivedArchive } from '../../services/base-images.service.ts';
import { toErrorResponse } from '../error-handler.ts';
import { parse } from '../validate.ts';

type ProviderParams = { provider: string };
type ImageParams = { provider: string; image: string };

/**
 * Streams a long operation as NDJSON: progress lines while it runs, then `done` or `error`.
 * Errors after the answer started travel as the last line, in the usual envelope's words.
 */
function streamOperation(reply: FastifyReply, run: (progress: BaseImageProgress) => Promise<BaseImageInfo>) {
  const out = new PassThrough();
  const write = (line: ImageOperationLine) => out.write(`${JSON.stringify(line)}\n`);
  run(({ phase, fraction }) => write({ type: 'progress', phase, ...(fraction === undefined ? {} : { fraction }) }))
    .then((image) => write({ type: 'done', image }))
    .catch((error: unknown) => {
      const { body, internal } = toErrorResponse(error);
      if (internal) reply.log.error({ err: error }, 'image operation failed');
      write({ type: 'error', error: { code: body.error.code, message: body.error.message } });
    })
    .finally(() => out.end());
  return reply.header('content-type', 'application/x-ndjson').header('cache-control', 'no-store').send(out);
}

export function registerBaseImageRoutes(app: FastifyInstance, deps: { baseImages: BaseImagesService }): void {
  const config = { access: 'admin' } as const;
  const { baseImages } = deps;

  // Archives arrive as raw streams, left unread until the import has been checked.
  app.addContentTypeParser(['application/x-tar', 'application/octet-stream'], (_request, payload, done) => done(null, payload));

  app.get<{ Params: ProviderParams }>(API_PATHS.baseImages, { config }, async (request) => ({
    images: await baseImages.list(request.params.provider),
  }));

  app.post<{ Params: ProviderParams }>(API_PATHS.baseImageImport, { config }, async (request, reply) => {
    const provider = request.params.provider;
    let name: string;
    let archive: ReceivedArchive;
    try {
      // Everything checkable is checked before one byte of the upload is read; a refusal (or an
      // upload cut at the cap) closes the connection rather than draining an archive nobody will use.
      name = parse(ImportBaseImageQuerySchema, request.query, 'query').name;
      const body = request.body as Readable | undefined;
      if (!body || typeof body.pipe !== 'function') {
        throw new SandcastError('unsupported_media_type', 'send the archive as the request body with Content-Type: application/x-tar');
      }
      const declared = request.headers['content-length'] === undefined ? null : Number(request.headers['content-length']);
      await baseImages.checkImport({ provider, name, declaredBytes: declared });
      archive = await baseImages.receive(body);
    } catch (error) {
      reply.header('connection', 'close');
      throw error;
    }
    return streamOperation(reply, (progress) =>
      baseImages.importReceived({ provider, name, archive, actor: request.principal! }, progress),
    );
  });

  app.post<{ Params: ProviderParams }>(API_PATHS.baseImageBuild, { config }, async (request, reply) => {
    const recipe = parse(BuildBaseImageBodySchema, request.body);
    const provider = request.params.provider;
    baseImages.checkProvider(provider);
    return streamOperation(reply, (progress) => baseImages.build({ provider, recipe, actor: request.principal! }, progress));
  });

  app.get<{ Params: ImageParams }>(API_PATHS.baseImageExport, { config }, async (request, reply) => {
    const { provider, image } = request.params;
    const archive = await baseImages.export({ provider, image, actor: request.principal! });
    return reply
      .header('content-type', 'application/x-tar')
      .header('content-disposition', `attachment; filename="${image.replace(/[^A-Za-z0-9._-]/g, '_')}.tar"`)
      .send(archive);
  });

  app.delete<{ Params: ImageParams }>(API_PATHS.baseImage, { config }, async (request) => {
    const { provider, image } = request.params;
    await baseImages.remove({ provider, image, actor: request.principal! });
    return { removed: image };
  });
}
