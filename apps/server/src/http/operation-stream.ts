import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { toErrorResponse } from './error-handler.ts';

type Progress = { phase: string; fraction?: number | undefined };
type Line<Done> =
  | { type: 'progress'; phase: string; fraction?: number }
  | Done
  | { type: 'error'; error: { code: string; message: string } };

/**
 * Streams a long operation as NDJSON: progress lines while it runs, then the `done` line `done`
 * makes of its result, or `error`. Errors after the answer started travel as the last line, in the
 * usual envelope's words. The status is 200 once the operation has started.
 */
export function streamOperation<T, Done extends { type: 'done' }>(
  reply: FastifyReply,
  run: (progress: (p: Progress) => void) => Promise<T>,
  done: (result: T) => Done,
) {
  const out = new PassThrough();
  const write = (line: Line<Done>) => out.write(`${JSON.stringify(line)}\n`);
  run(({ phase, fraction }) => write({ type: 'progress', phase, ...(fraction === undefined ? {} : { fraction }) }))
    .then((result) => write(done(result)))
    .catch((error: unknown) => {
      const { body, internal } = toErrorResponse(error);
      if (internal) reply.log.error({ err: error }, 'long operation failed');
      write({ type: 'error', error: { code: body.error.code, message: body.error.message } });
    })
    .finally(() => out.end());
  return reply.header('content-type', 'application/x-ndjson').header('cache-control', 'no-store').send(out);
}
