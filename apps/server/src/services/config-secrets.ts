import { isEncryptedValue, type SecretBox } from './secrets.ts';

type Doc = Record<string, unknown>;

/** What a stored secret looks like to API clients. */
const SECRET_PLACEHOLDER = { secret: true, set: true } as const;

function isPlaceholder(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { secret?: unknown }).secret === true;
}

function getPath(doc: Doc, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Doc)[key] : undefined), doc);
}

function setPath(doc: Doc, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  const last = keys.pop()!;
  let node = doc;
  for (const key of keys) {
    if (!node[key] || typeof node[key] !== 'object') return;
    node = node[key] as Doc;
  }
  if (value === undefined) delete node[last];
  else node[last] = value;
}

function mapDeep(value: unknown, fn: (value: unknown) => unknown | typeof KEEP): unknown {
  const mapped = fn(value);
  if (mapped !== KEEP) return mapped;
  if (Array.isArray(value)) return value.map((v) => mapDeep(v, fn));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapDeep(v, fn)]));
  return value;
}
const KEEP = Symbol('keep');

/**
 * A client may send back the placeholder it was shown to mean "keep the stored secret": those
 * are replaced with the current plaintext (or dropped when there is none).
 */
export function resolveSecretPlaceholders(incoming: Doc, secretPaths: readonly string[], current: Doc | null): Doc {
  const out = structuredClone(incoming);
  for (const p of secretPaths) {
    if (isPlaceholder(getPath(out, p))) setPath(out, p, current ? getPath(current, p) : undefined);
  }
  return out;
}

/** Encrypts the values at the secret paths, for storage. */
export function sealConfig(config: Doc, secretPaths: readonly string[], box: SecretBox): Doc {
  const out = structuredClone(config);
  for (const p of secretPaths) {
    const value = getPath(out, p);
    if (value !== undefined && !isEncryptedValue(value)) setPath(out, p, box.encrypt(value));
  }
  return out;
}

/** Decrypts every encrypted value, for handing the config to a provider. */
export function openConfig(config: Doc, box: SecretBox): Doc {
  return mapDeep(config, (v) => (isEncryptedValue(v) ? box.decrypt(v) : KEEP)) as Doc;
}

/** Replaces every encrypted value with the placeholder, for API answers and activity. */
export function maskConfig(config: Doc): Doc {
  return mapDeep(config, (v) => (isEncryptedValue(v) ? { ...SECRET_PLACEHOLDER } : KEEP)) as Doc;
}
