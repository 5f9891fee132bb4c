import { randomUUID } from 'node:crypto';

/** A prefixed random id, e.g. `env_3f2a…`; the prefix says what the id names. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
