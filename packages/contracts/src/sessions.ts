import {
  DURABILITIES,
  IDLE_ACTIONS,
  NETWORK_CONTAINMENTS,
  SANDBOX_DESIRED_STATUSES,
  SANDBOX_STATUSES,
  SESSION_STATUSES,
} from '@sandcast/core';
import { z } from 'zod';
import { SandboxRecoveredSchema } from './checkpoints.ts';
import { ExecResultSchema } from './custom-images.ts';
import { SandboxPathSchema } from './exec-limits.ts';
import { BootstrapCommandsSchema, LifecycleSchema } from './sandbox-spec.ts';

/** A one-off spec over a binding (configurable agents only; the instance limits what it may set). */
export const InlineSandboxSpecSchema = z.strictObject({
  use: z.string().min(1).max(40).optional(),
  config: z.record(z.string().max(100), z.unknown()).optional(),
  lifecycle: LifecycleSchema.partial().optional(),
  bootstrap: BootstrapCommandsSchema.optional(),
});

export const StartSessionBodySchema = z.strictObject({
  agentId: z.string().min(1).max(100),
  /** Omit for the policy's default; `{use}` picks a binding; `{inline}` a one-off spec. */
  sandbox: z.union([z.strictObject({ use: z.string().min(1).max(40) }), z.strictObject({ inline: InlineSandboxSpecSchema })]).optional(),
});
export type StartSessionBody = z.infer<typeof StartSessionBodySchema>;

export const SessionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  agentVersionId: z.string(),
  status: z.enum(SESSION_STATUSES),
  primarySandboxId: z.string().nullable(),
  bindingName: z.string().nullable(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
});
export type SessionBody = z.infer<typeof SessionSchema>;
export const SessionListSchema = z.object({ sessions: z.array(SessionSchema) });

export const SANDBOX_ACTIONS = ['exec', 'files', 'terminal', 'stop', 'start', 'end'] as const;
export type SandboxAction = (typeof SANDBOX_ACTIONS)[number];

/** `GET /api/sessions/:id/sandbox`: the primary sandbox as the session pinned it. */
export const SessionSandboxSchema = z.object({
  sandboxId: z.string(),
  sessionId: z.string(),
  environmentId: z.string().nullable(),
  environmentRevisionId: z.string(),
  environmentRevisionNumber: z.number().int().nullable(),
  imageId: z.string().nullable(),
  bindingName: z.string(),
  target: z.object({ provider: z.string() }),
  containment: z.object({ network: z.enum(NETWORK_CONTAINMENTS), hosts: z.array(z.string()), networkEnforced: z.boolean() }),
  durability: z.enum(DURABILITIES),
  /** What survives a loss of the compute, in words of the durability. */
  recoveryClass: z.string(),
  lifecycle: z.object({ idleAfterSeconds: z.number().int(), idleAction: z.enum(IDLE_ACTIONS) }),
  capabilities: z.object({
    nativeProcesses: z.boolean(),
    packages: z.boolean(),
    pty: z.boolean(),
    ports: z.boolean(),
    portableCheckpoint: z.boolean(),
    networkEnforced: z.boolean(),
  }),
  desiredState: z.enum(SANDBOX_DESIRED_STATUSES),
  observedState: z.enum(SANDBOX_STATUSES),
  failureReason: z.string().nullable(),
  generation: z.number().int(),
  currentCheckpointId: z.string().nullable(),
  lastActivityAt: z.string(),
  allowedActions: z.array(z.enum(SANDBOX_ACTIONS)),
});
export type SessionSandboxBody = z.infer<typeof SessionSandboxSchema>;

export const SessionFileQuerySchema = z.strictObject({ path: SandboxPathSchema });

/** A file's content over JSON: UTF-8 text, or base64 for bytes that are not. */
export const SessionFileSchema = z.object({
  path: z.string(),
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
  sizeBytes: z.number().int(),
  recovered: SandboxRecoveredSchema.optional(),
});
export type SessionFileBody = z.infer<typeof SessionFileSchema>;

export const WriteSessionFileBodySchema = z.strictObject({
  content: z.string(),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  mode: z.number().int().min(0).max(0o777, 'mode is permission bits only (at most 0o777): no setuid, setgid or sticky').optional(),
});
export type WriteSessionFileBody = z.input<typeof WriteSessionFileBodySchema>;
export const WriteSessionFileAnswerSchema = z.object({
  path: z.string(),
  sizeBytes: z.number().int(),
  recovered: SandboxRecoveredSchema.optional(),
});

/** A session's exec answer: the command's result, and `recovered` when its compute had to be replaced first. */
export const SessionExecAnswerSchema = ExecResultSchema.extend({ recovered: SandboxRecoveredSchema.optional() });
export type SessionExecAnswer = z.infer<typeof SessionExecAnswerSchema>;
