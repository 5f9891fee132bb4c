import { DURABILITIES, IDLE_ACTIONS, NETWORK_CONTAINMENTS, SANDBOX_SPEC_LIMITS } from '@sandcast/core';
import { z } from 'zod';
import { utf8Length } from './exec-limits.ts';

const L = SANDBOX_SPEC_LIMITS;

const noNul = (value: string) => !value.includes('\0');

export const BootstrapCommandsSchema = z
  .array(
    z
      .string()
      .min(1, 'a bootstrap command may not be empty')
      .refine(noNul, 'must not contain a NUL character')
      .refine((c) => utf8Length(c) <= L.bootstrapCommandBytes, `each bootstrap command is at most ${L.bootstrapCommandBytes} bytes`),
  )
  .max(L.bootstrapCommands, `at most ${L.bootstrapCommands} bootstrap commands`);

export const LifecycleSchema = z.strictObject({
  idleAfterSeconds: z.number().int().min(L.idleAfterSecondsMin).max(L.idleAfterSecondsMax),
  idleAction: z.enum(IDLE_ACTIONS),
});

/** Host names an allowlist may name: `example.com` or `*.example.com`, no ports, no paths. */
const HostPattern = z
  .string()
  .max(253)
  .regex(/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i, 'a host name, or *.suffix');

const ContainmentSchema = z.strictObject({
  network: z.enum(NETWORK_CONTAINMENTS),
  hosts: z.array(HostPattern).max(L.allowlistHosts).default([]),
});

/** An absolute, normalised directory inside the sandbox; never `/` itself. */
const WorkspacePath = z
  .string()
  .max(L.workspacePathChars)
  .refine(noNul, 'must not contain a NUL character')
  .refine((p) => p.startsWith('/') && p !== '/', 'an absolute directory other than /, such as /workspace')
  .refine(
    (p) => !p.split('/').some((part) => part === '..' || part === '.') && !p.includes('//') && !p.endsWith('/'),
    'a normalised path: no ".", "..", "//" or trailing "/"',
  );

const WarmPoolSchema = z.strictObject({
  size: z.number().int().min(0).max(L.warmPoolSizeMax),
  maxAgeSeconds: z.number().int().min(L.warmPoolMaxAgeSecondsMin).max(L.warmPoolMaxAgeSecondsMax),
});

const Text = (max: number) => z.string().max(max).refine(noNul, 'must not contain a NUL character').nullable();

/** The spec as stored and answered: every field present. */
export const SandboxSpecSchema = z.object({
  displayName: z.string().nullable(),
  description: z.string().nullable(),
  durability: z.enum(DURABILITIES),
  lifecycle: LifecycleSchema,
  bootstrap: z.array(z.string()),
  containment: z.object({ network: z.enum(NETWORK_CONTAINMENTS), hosts: z.array(z.string()) }),
  workspacePath: z.string(),
  warmPool: z.object({ size: z.number(), maxAgeSeconds: z.number() }),
});

/** The spec as a client sends it: any subset; what is missing keeps its current value (or its default). */
export const SandboxSpecInputSchema = z.strictObject({
  displayName: Text(L.displayNameChars).optional(),
  description: Text(L.descriptionChars).optional(),
  durability: z.enum(DURABILITIES).optional(),
  lifecycle: LifecycleSchema.partial().optional(),
  bootstrap: BootstrapCommandsSchema.optional(),
  containment: ContainmentSchema.optional(),
  workspacePath: WorkspacePath.optional(),
  warmPool: WarmPoolSchema.partial().optional(),
});
export type SandboxSpecInput = z.infer<typeof SandboxSpecInputSchema>;

/** What an environment's spec is when nothing was said: shared with clients and their tests. */
export { DEFAULT_SANDBOX_SPEC } from '@sandcast/core';
