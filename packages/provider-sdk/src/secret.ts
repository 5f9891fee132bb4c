import type { z } from 'zod';

/**
 * Marks a config field as secret: stored encrypted, never returned by the API, never logged.
 * The mark travels into the derived JSON Schema as `"secret": true`, where the server and the
 * UI find it.
 */
export function secret<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secret: true }) as T;
}

/** A JSON Schema node, as far as secret discovery needs it. */
interface JsonSchemaNode {
  secret?: unknown;
  properties?: Record<string, JsonSchemaNode>;
}

/** Dotted paths of every field marked secret in a JSON Schema derived from a config schema. */
export function secretPathsOf(jsonSchema: unknown, prefix = ''): string[] {
  const node = jsonSchema as JsonSchemaNode;
  const paths: string[] = [];
  for (const [key, child] of Object.entries(node?.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (child?.secret === true) paths.push(path);
    else paths.push(...secretPathsOf(child, path));
  }
  return paths;
}
