import type { FieldIssue } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { z } from 'zod';

/** Parses a request part with a shared contract schema; a mismatch is a 400 naming every field. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, what: 'body' | 'query' | 'params' = 'body'): z.output<T> {
  const result = schema.safeParse(value ?? (what === 'body' ? undefined : {}));
  if (result.success) return result.data;
  const issues: FieldIssue[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
  const first = issues[0];
  throw new SandcastError(
    'validation_failed',
    `invalid request ${what}: ${first?.path === '(root)' ? '' : `${first?.path}: `}${first?.message}`,
    {
      issues,
    },
  );
}
