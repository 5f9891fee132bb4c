import { z } from 'zod';
import { SandboxRecoveredSchema } from './checkpoints.ts';
import { ErrorEnvelopeSchema } from './errors.ts';

/**
 * Live exec output (docs/spec/exec-stream.md): `POST …/exec` with `Accept: application/x-ndjson`
 * answers one JSON frame per line as the command produces output, then one `exit` frame (or an
 * `error` frame when the provider failed mid-way).
 */
export const EXEC_STREAM_CONTENT_TYPE = 'application/x-ndjson';

/** Per stream: whether the output was cut at the cap (the JSON form), and the bytes counted. */
export const ExecTruncatedSchema = z.object({ stdout: z.boolean(), stderr: z.boolean() });
export const ExecTotalBytesSchema = z.object({ stdout: z.number().int().nonnegative(), stderr: z.number().int().nonnegative() });

const outputFields = {
  /** UTF-8 text, or base64 of the bytes when `encoding` is `base64` (they were not valid UTF-8). */
  data: z.string(),
  encoding: z.literal('base64').optional(),
};
export const ExecStdoutFrameSchema = z.object({ type: z.literal('stdout'), ...outputFields });
export const ExecStderrFrameSchema = z.object({ type: z.literal('stderr'), ...outputFields });

export const ExecExitFrameSchema = z.object({
  type: z.literal('exit'),
  exitCode: z.number().int(),
  timedOut: z.boolean(),
  /** From the request's arrival to the command's exit. */
  durationMs: z.number().nonnegative(),
  /** Always false when streamed: every byte was sent. The same shape as the JSON answer's. */
  truncated: ExecTruncatedSchema,
  totalBytes: ExecTotalBytesSchema,
  /** A session's command whose compute had to be replaced first (durability `checkpointed`). */
  recovered: SandboxRecoveredSchema.optional(),
});

/** The provider failed after the stream began; the command was stopped. Ends the stream. */
export const ExecErrorFrameSchema = z.object({ type: z.literal('error'), error: ErrorEnvelopeSchema.shape.error });

export const ExecStreamFrameSchema = z.discriminatedUnion('type', [
  ExecStdoutFrameSchema,
  ExecStderrFrameSchema,
  ExecExitFrameSchema,
  ExecErrorFrameSchema,
]);

export type ExecStreamFrame = z.infer<typeof ExecStreamFrameSchema>;
export type ExecOutputFrame = z.infer<typeof ExecStdoutFrameSchema> | z.infer<typeof ExecStderrFrameSchema>;
export type ExecExitFrame = z.infer<typeof ExecExitFrameSchema>;
export type ExecErrorFrame = z.infer<typeof ExecErrorFrameSchema>;
