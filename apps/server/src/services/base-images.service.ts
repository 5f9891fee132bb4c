import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BuildBaseImageBody } from '@sandcast/contracts';
import { type Principal, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { BaseImageInfo, BaseImageProgress, BaseImageStore } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';

export type BaseImagesService = ReturnType<typeof createBaseImagesService>;

/** An upload spooled to the server's disk, waiting for its import. */
export interface ReceivedArchive {
  file: string;
  bytes: number;
}

const GiB = 1024 ** 3;
const sizeText = (bytes: number) => (bytes >= GiB ? `${(bytes / GiB).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`);

/**
 * Base images a provider keeps itself (the local provider's image store): list, import, build,
 * export, remove. Everything about an import that can be checked before its upload is read is
 * checked first (`checkImport`), so a bad request is refused without taking the archive; the
 * upload is spooled under a cap, imported by the provider, and removed whatever happens.
 */
export function createBaseImagesService(deps: {
  store: Store;
  providers: ProviderRegistry;
  dataDir: string;
  /** SANDCAST_IMAGE_IMPORT_MAX_BYTES: cap on the upload and on its uncompressed size. */
  maxImportBytes: number;
  log: FastifyBaseLogger;
}) {
  const uploadDir = path.join(deps.dataDir, 'tmp');

  const storeOf = (providerId: string): BaseImageStore => {
    const registered = deps.providers.get(providerId);
    if (!registered) throw new SandcastError('not_found', `no provider ${providerId}; GET /api/sandbox-targets lists them`);
    const images = registered.provider.baseImages;
    if (!images) throw new SandcastError('capability_unsupported', `the ${providerId} provider does not keep base images of its own`);
    return images;
  };

  const record = (action: string, actor: Principal, providerId: string, subjectId: string, details: Record<string, unknown>) =>
    recordActivity(deps.store.repos, {
      action,
      actor,
      subjectType: 'base_image',
      subjectId,
      details: { provider: providerId, ...details },
    });

  const tooLarge = () =>
    new SandcastError(
      'payload_too_large',
      `image archives up to ${sizeText(deps.maxImportBytes)} are accepted; raise SANDCAST_IMAGE_IMPORT_MAX_BYTES on the server for a larger one`,
    );

  return {
    list: (providerId: string) => storeOf(providerId).list(),

    /** Throws unless the provider exists and keeps base images (checked before a streamed answer starts). */
    checkProvider: (providerId: string): void => void storeOf(providerId),

    /**
     * Refuses an import before its body is read: an unknown provider, a name already taken (the
     * built-in `host` included), a declared size over the cap.
     */
    async checkImport(input: { provider: string; name: string; declaredBytes: number | null }): Promise<void> {
      const images = storeOf(input.provider);
      if (input.declaredBytes !== null && input.declaredBytes > deps.maxImportBytes) throw tooLarge();
      const taken = (await images.list()).find((image) => image.name === input.name || image.id === input.name);
      if (taken) {
        throw new SandcastError(
          'conflict',
          `an image named "${input.name}" already exists${taken.origin === 'builtin' ? ' (the built-in base)' : ''}; ` +
            'remove it first or choose another name',
        );
      }
    },

    /** Spools an upload to the data dir's tmp/, refusing it at the byte that crosses the cap. */
    async receive(body: Readable): Promise<ReceivedArchive> {
      await mkdir(uploadDir, { recursive: true, mode: 0o700 });
      const file = path.join(uploadDir, `import-${randomUUID()}.tar`);
      let bytes = 0;
      const cap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done(bytes > deps.maxImportBytes ? tooLarge() : null, chunk);
        },
      });
      try {
        await pipeline(body, cap, createWriteStream(file, { mode: 0o600 }));
      } catch (error) {
        await rm(file, { force: true });
        throw error;
      }
      deps.log.info({ uploadBytes: bytes }, `image archive received: ${sizeText(bytes)}`);
      return { file, bytes };
    },

    /** Imports a received archive; the spooled file is removed whatever happens. */
    async importReceived(
      input: { provider: string; name: string; archive: ReceivedArchive; actor: Principal },
      onProgress: BaseImageProgress,
    ): Promise<BaseImageInfo> {
      const started = performance.now();
      try {
        const image = await storeOf(input.provider).importArchive({
          tarPath: input.archive.file,
          name: input.name,
          maxBytes: deps.maxImportBytes,
          onProgress,
        });
        deps.log.info(
          { provider: input.provider, image: image.id, uploadBytes: input.archive.bytes, imageBytes: image.sizeBytes },
          `imported base image ${image.name}: ${sizeText(input.archive.bytes)} archive in ${Math.round(performance.now() - started)} ms`,
        );
        await record('base_image.imported', input.actor, input.provider, image.id, {
          name: image.name,
          archiveBytes: input.archive.bytes,
          sizeBytes: image.sizeBytes,
        });
        return image;
      } catch (error) {
        deps.log.warn(
          { provider: input.provider, name: input.name, uploadBytes: input.archive.bytes, err: (error as Error).message },
          'base image import refused or failed',
        );
        throw error;
      } finally {
        await rm(input.archive.file, { force: true });
      }
    },

    async build(input: { provider: string; recipe: BuildBaseImageBody; actor: Principal }, onProgress: BaseImageProgress) {
      const image = await storeOf(input.provider).build(input.recipe, onProgress);
      await record('base_image.built', input.actor, input.provider, image.id, {
        name: image.name,
        distro: input.recipe.distro,
        release: input.recipe.release ?? null,
        sizeBytes: image.sizeBytes,
      });
      return image;
    },

    async export(input: { provider: string; image: string; actor: Principal }): Promise<Readable> {
      const archive = await storeOf(input.provider).export(input.image);
      await record('base_image.exported', input.actor, input.provider, input.image, {});
      return archive;
    },

    async remove(input: { provider: string; image: string; actor: Principal }): Promise<void> {
      await storeOf(input.provider).remove(input.image);
      await record('base_image.removed', input.actor, input.provider, input.image, {});
    },
  };
}
