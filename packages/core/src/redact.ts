/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

const SECRET_KEY = /(secret|token|password|passwd|api[-_]?key|apikey|credential|authorization|private[-_]?key|cookie)/i;

/**
 * Returns a deep copy of `value` with every secret replaced by `[redacted]`: values under keys
 * that look secret (token, password, apiKey, …), values at the given dotted `secretPaths`,
 * and strings that look like bearer credentials. Used for activity details and logs.
 */
export function redact(value: unknown, secretPaths: readonly string[] = []): unknown {
  const paths = new Set(secretPaths);
  return walk(value, '', paths);
}

function walk(value: unknown, path: string, paths: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item, i) => walk(item, join(path, String(i)), paths));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const childPath = join(path, key);
      out[key] = SECRET_KEY.test(key) || paths.has(childPath) ? REDACTED : walk(child, childPath, paths);
    }
    return out;
  }
  if (typeof value === 'string' && /^(bearer\s+|sc_)[A-Za-z0-9._~+/=-]{16,}/i.test(value)) return REDACTED;
  return value;
}

function join(prefix: string, key: string): string {
  return prefix ? `${prefix}.${key}` : key;
}
