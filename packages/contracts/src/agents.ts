import {
  AGENT_CAPABILITIES,
  AGENT_NAME_PATTERN,
  BINDING_NAME_PATTERN,
  DURABILITIES,
  MAX_BINDINGS,
  SANDBOX_POLICY_MODES,
} from '@sandcast/core';
import { z } from 'zod';

const AgentName = z
  .string()
  .regex(AGENT_NAME_PATTERN, 'use 1-63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit');

const Text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((v) => !v.includes('\0'), 'must not contain a NUL character');

export const SandboxBindingSchema = z.strictObject({
  /** An exact revision id (`rev_…`); "use latest" in a client writes the current one. */
  environmentRevisionId: z.string().min(1).max(100),
  durability: z.enum(DURABILITIES).optional(),
});

export const SandboxPolicySchema = z.strictObject({
  mode: z.enum(SANDBOX_POLICY_MODES),
  default: z.string().max(40).nullable().default(null),
  bindings: z
    .record(z.string().regex(BINDING_NAME_PATTERN, 'binding names are 1-40 lowercase letters, digits, "_" or "-"'), SandboxBindingSchema)
    .refine((b) => Object.keys(b).length <= MAX_BINDINGS, `at most ${MAX_BINDINGS} bindings`)
    .default({}),
});
export type SandboxPolicyBody = z.input<typeof SandboxPolicySchema>;

export const CreateAgentBodySchema = z.strictObject({
  name: AgentName,
  displayName: Text(100).nullable().optional(),
  description: Text(2000).nullable().optional(),
  sandboxPolicy: SandboxPolicySchema,
  capabilities: z.array(z.enum(AGENT_CAPABILITIES)).max(AGENT_CAPABILITIES.length).default([]),
});
export type CreateAgentBody = z.input<typeof CreateAgentBodySchema>;

export const UpdateAgentBodySchema = z
  .strictObject({
    displayName: Text(100).nullable().optional(),
    description: Text(2000).nullable().optional(),
    sandboxPolicy: SandboxPolicySchema.optional(),
    capabilities: z.array(z.enum(AGENT_CAPABILITIES)).max(AGENT_CAPABILITIES.length).optional(),
  })
  .refine((body) => Object.keys(body).length > 0, {
    message: 'send at least one of displayName, description, sandboxPolicy, capabilities',
  });
export type UpdateAgentBody = z.input<typeof UpdateAgentBodySchema>;

export const AgentVersionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  number: z.number().int(),
  sandboxPolicy: z.object({
    mode: z.enum(SANDBOX_POLICY_MODES),
    default: z.string().nullable(),
    bindings: z.record(z.string(), z.object({ environmentRevisionId: z.string(), durability: z.enum(DURABILITIES).optional() })),
  }),
  capabilities: z.array(z.enum(AGENT_CAPABILITIES)),
  createdAt: z.string(),
});
export type AgentVersionBody = z.infer<typeof AgentVersionSchema>;

export const AgentSchema = z.object({
  id: z.string(),
  name: z.string(),
  displayName: z.string().nullable(),
  description: z.string().nullable(),
  currentVersion: AgentVersionSchema,
  archivedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AgentBody = z.infer<typeof AgentSchema>;

export const AgentListSchema = z.object({ agents: z.array(AgentSchema) });
export const AgentVersionListSchema = z.object({ versions: z.array(AgentVersionSchema) });
export const AgentListQuerySchema = z.strictObject({ includeArchived: z.enum(['true', 'false']).optional() });
