import type { Readable } from 'node:stream';
import { API_PATHS, BuildBaseImageBodySchema, ImportBaseImageQuerySchema } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { BaseImageInfo } from '@sandcast/provider-sdk';
import type { FastifyInstance } from 'fastify';
import type { BaseImagesService, ReceivedArchive } from '../../services/base-images.service.ts';
import { streamOperation } from '../operation-stream.ts';
import { parse } from '../validate.ts';

type ProviderParams = { provider: string };
type ImageParams = { provider: string; image: string };

/** Image operations stream progress, then `done` with the image. */
const imageDone = (image: BaseImageInfo) => ({ type: 'done' as const, image });

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
    return streamOperation(
      reply,
      (progress) => baseImages.importReceived({ provider, name, archive, actor: request.principal! }, progress),
      imageDone,
    );
  });

  app.post<{ Params: ProviderParams }>(API_PATHS.baseImageBuild, { config }, async (request, reply) => {
    const recipe = parse(BuildBaseImageBodySchema, request.body);
    const provider = request.params.provider;
    baseImages.checkProvider(provider);
    return streamOperation(reply, (progress) => baseImages.build({ provider, recipe, actor: request.principal! }, progress), imageDone);
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
