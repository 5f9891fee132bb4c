import {
  API_PATHS,
  BaseImageListSchema,
  type BuildBaseImageBody,
  type ErrorCode,
  fillPath,
  HTTP_STATUS_BY_CODE,
  ImageOperationLineSchema,
} from '@sandcast/contracts';
import { z } from 'zod';
import { SandcastApiError } from './errors.ts';

export type ProgressListener = (progress: { phase: string; fraction?: number | undefined }) => void;

type OperationLine<Done> =
  | { type: 'progress'; phase: string; fraction?: number | undefined }
  | ({ type: 'done' } & Done)
  | { type: 'error'; error: { code: ErrorCode; message: string } };

/**
 * Reads an NDJSON operation answer (image imports and builds, checkpoint restores): reports
 * progress, returns what `result` takes from the `done` line, throws the error line.
 */
export async function readOperationLines<Done, T>(
  response: Response,
  schema: z.ZodType<OperationLine<Done>>,
  result: (done: Done) => T,
  onProgress?: ProgressListener,
): Promise<T> {
  if (!response.body)
    throw new SandcastApiError({ status: response.status, code: 'http_error', message: 'the server sent no answer body' });
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (!line) continue;
      const parsed = schema.parse(JSON.parse(line));
      if (parsed.type === 'progress') onProgress?.({ phase: parsed.phase, fraction: parsed.fraction });
      else if (parsed.type === 'done') return result(parsed);
      else {
        const status = HTTP_STATUS_BY_CODE[parsed.error.code];
        throw new SandcastApiError({ status, code: parsed.error.code, message: parsed.error.message });
      }
    }
  }
  throw new SandcastApiError({ status: 502, code: 'http_error', message: 'the operation ended without a result; see the server log' });
}

/** The two ways the client sends requests, as this module needs them (kept apart to avoid an import cycle). */
export interface Requester {
  request<T extends z.ZodType>(method: 'GET' | 'POST' | 'DELETE', path: string, schema: T): Promise<z.output<T>>;
  raw(method: 'GET' | 'POST', path: string, options?: { body?: BodyInit; contentType?: string }): Promise<Response>;
}

/** Base images a provider keeps itself (the local provider): list, import, build, export, remove. */
export function baseImagesApi(client: Requester) {
  const path = (template: string, params: Record<string, string>) => fillPath(template, params);
  return {
    list: async (provider: string) => (await client.request('GET', path(API_PATHS.baseImages, { provider }), BaseImageListSchema)).images,

    /** Uploads a rootfs tarball or `docker save` archive as it is read. */
    import: async (provider: string, name: string, archive: ReadableStream<Uint8Array> | Uint8Array, onProgress?: ProgressListener) => {
      const url = `${path(API_PATHS.baseImageImport, { provider })}?name=${encodeURIComponent(name)}`;
      const response = await client.raw('POST', url, { body: archive as BodyInit, contentType: 'application/x-tar' });
      return readOperationLines(response, ImageOperationLineSchema, (done) => done.image, onProgress);
    },

    build: async (provider: string, recipe: BuildBaseImageBody, onProgress?: ProgressListener) => {
      const response = await client.raw('POST', path(API_PATHS.baseImageBuild, { provider }), {
        body: JSON.stringify(recipe),
        contentType: 'application/json',
      });
      return readOperationLines(response, ImageOperationLineSchema, (done) => done.image, onProgress);
    },

    /** The image as a `docker load` archive. */
    export: async (provider: string, image: string): Promise<ReadableStream<Uint8Array>> => {
      const response = await client.raw('GET', path(API_PATHS.baseImageExport, { provider, image }));
      if (!response.body)
        throw new SandcastApiError({ status: response.status, code: 'http_error', message: 'the server sent no archive' });
      return response.body;
    },

    remove: (provider: string, image: string) =>
      client.request('DELETE', path(API_PATHS.baseImage, { provider, image }), z.object({ removed: z.string() })),
  };
}
