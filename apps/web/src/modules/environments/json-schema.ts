/** The part of JSON Schema the provider config forms use (derived from the providers' zod schemas). */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  pattern?: string;
  /** Sandcast's mark for a secret field: stored encrypted, never shown. */
  secret?: boolean;
}

export type FieldKind = 'string' | 'secret' | 'enum' | 'number' | 'integer' | 'boolean' | 'object' | 'string-map' | 'json';

export function fieldKind(schema: JsonSchema): FieldKind {
  if (schema.secret) return 'secret';
  if (schema.enum) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'object':
      if (schema.properties) return 'object';
      if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.type === 'string') return 'string-map';
      return 'json';
    default:
      return 'json';
  }
}

/** "memoryMb" → "Memory MB", "pidsLimit" → "Pids limit". */
export function fieldLabel(name: string, schema: JsonSchema): string {
  if (schema.title) return schema.title;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .map((w, i) => (/^(mb|gb|id|url|cpu|api)$/i.test(w) ? w.toUpperCase() : i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w.toLowerCase()));
  return words.join(' ');
}

/** A short hint from the schema's limits, for people: "1–64", "at least 16". */
export function fieldHint(schema: JsonSchema): string | null {
  const parts: string[] = [];
  if (schema.description) parts.push(schema.description);
  const exclusive = schema.minimum === undefined && schema.exclusiveMinimum !== undefined;
  const rawMin = schema.minimum ?? schema.exclusiveMinimum;
  const min = rawMin === undefined ? undefined : readable(rawMin);
  const max = schema.maximum !== undefined && schema.maximum < 1e12 ? readable(schema.maximum) : undefined;
  const low = min === undefined ? null : exclusive ? `more than ${min}` : `at least ${min}`;
  if (low && max !== undefined) parts.push(exclusive ? `${low}, up to ${max}` : `${min} to ${max}`);
  else if (low) parts.push(low);
  else if (max !== undefined) parts.push(`up to ${max}`);
  const byDefault = defaultWords(schema.default);
  if (byDefault) parts.push(byDefault);
  return parts.length ? parts.join(' · ') : null;
}

/** 1048576 → "1,048,576". */
const readable = (n: number) => n.toLocaleString('en-US');

/** "Default: 2", "On by default"; nothing for empty or structured defaults (they read as code). */
function defaultWords(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'boolean') return value ? 'On by default' : 'Off by default';
  if (typeof value === 'number') return `Default: ${readable(value)}`;
  if (typeof value === 'string') return `Default: ${value}`;
  return null;
}

export const isSecretPlaceholder = (value: unknown): value is { secret: true; set: boolean } =>
  typeof value === 'object' && value !== null && (value as { secret?: unknown }).secret === true;
