import { EXEC_STREAM_CONTENT_TYPE, type ExecExitFrame, type ExecStreamFrame, type SandboxRecovered } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { ExecChunk, ExecProcess, ExecResult } from '@sandcast/provider-sdk';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './error-handler.ts';
import { ExecFrameEncoder } from './exec-frames.ts';

const NOT_ACCEPTABLE =
  'this route answers application/json (one answer when it ends) or application/x-ndjson (lines as it runs: exec frames, restore progress); ' +
  'send Accept with one of those, or none';

/** The quality a media range in `Accept` gives `type` (0 when it does not match). */
function qualityOf(accept: string, type: string): { q: number; exact: boolean } {
  const [major] = type.split('/');
  let best = { q: 0, exact: false, specificity: -1 };
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < best.specificity) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(qParam.slice(2)) ? Number(qParam.slice(2)) : 0;
    best = { q, exact: specificity === 2, specificity };
  }
  return { q: best.q, exact: best.exact };
}

/**
 * Whether the caller asked for the stream (exec frames, a restore's progress): `application/x-ndjson` named in `Accept` and liked at
 * least as much as JSON. No `Accept`, or one that allows JSON, is the JSON answer; one that
 * allows neither is a 406.
 */
export function wantsNdjson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return false;
  const ndjson = qualityOf(accept, EXEC_STREAM_CONTENT_TYPE);
  const json = qualityOf(accept, 'application/json');
  if (ndjson.exact && ndjson.q > 0 && ndjson.q >= json.q) return true;
  if (json.q > 0) return false;
  throw new SandcastError('not_acceptable', NOT_ACCEPTABLE, { accept: accept.slice(0, 200) });
}

/** How much the response may hold before the route stops reading the command's output. */
const RESPONSE_BUFFER_BYTES = 1024 * 1024;

/** Streams running behind answers in this process, stopped when the server closes. */
export type RunningExecs = Set<ExecProcess>;

/**
 * Answers an exec request: the capped JSON result, or with `Accept: application/x-ndjson` one
 * frame per line as the command produces output, then the exit frame. The response's backpressure
 * reaches the command (at most about 1 MiB waits in the response and 16 chunks in the output);
 * a client that goes away before the exit frame has its command's process tree killed.
 */
export async function replyExec(
  request: FastifyRequest,
  reply: FastifyReply,
  options: {
    running: RunningExecs;
    json: () => Promise<ExecResult>;
    stream: () => Promise<ExecProcess & { recovered?: SandboxRecovered | undefined }>;
    /** Runs after the command exits and before the exit frame goes out (a checkpoint). */
    beforeExit?: (() => Promise<unknown>) | undefined;
  },
): Promise<unknown> {
  const started = performance.now();
  if (!wantsNdjson(request.headers.accept)) return options.json();
  // Errors until here (validation, access, a stopped sandbox) are ordinary JSON error answers.
  const command = await options.stream();
  options.running.add(command);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': `${EXEC_STREAM_CONTENT_TYPE}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.flushHeaders();
  let finished = false;
  res.on('close', () => {
    options.running.delete(command);
    if (finished) return;
    finished = true;
    // The client went away mid-command: nobody will read the rest.
    void command.kill().catch((err: unknown) => request.log.warn({ err }, 'killing an abandoned exec failed'));
  });
  const send = async (frame: ExecStreamFrame): Promise<void> => {
    if (res.destroyed) return;
    res.write(`${JSON.stringify(frame)}\n`);
    // Let a little queue up (fewer round trips than waiting at the socket's 16 KiB), then wait.
    if (res.writableLength >= RESPONSE_BUFFER_BYTES) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  };
  const encoder = new ExecFrameEncoder();
  try {
    for await (const chunk of command.output as AsyncIterable<ExecChunk>) {
      for (const frame of encoder.push(chunk)) await send(frame);
    }
    for (const frame of encoder.flush()) await send(frame);
    const exit = await command.exit;
    await options.beforeExit?.();
    const frame: ExecExitFrame = {
      type: 'exit',
      exitCode: exit.exitCode,
      timedOut: exit.timedOut,
      durationMs: Math.round(performance.now() - started),
      truncated: { stdout: false, stderr: false },
      totalBytes: { ...encoder.totalBytes },
      ...(command.recovered ? { recovered: command.recovered } : {}),
    };
    await send(frame);
  } catch (error) {
    await command.kill().catch(() => undefined);
    const mapped = toErrorResponse(error);
    if (mapped.internal) request.log.error({ err: error }, 'exec stream failed');
    await send({ type: 'error', error: mapped.body.error });
  } finally {
    finished = true;
    options.running.delete(command);
    res.end();
  }
  return reply;
}
