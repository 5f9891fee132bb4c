/**
 * What a captured image was built from: the provider and the config minus runtime knobs (cpu,
 * memory, timeouts — they tune a run, not the filesystem) and minus secrets (rotating a token does
 * not change the machine). Two configs with the same boot source can share an image.
 */
export interface BootSource {
  provider: string;
  config: Record<string, unknown>;
}

export function bootSourceOf(input: {
  provider: string;
  config: Record<string, unknown>;
  runtimeKnobs: readonly string[];
  secretPaths: readonly string[];
}): BootSource {
  const config = structuredClone(input.config);
  for (const knob of input.runtimeKnobs) delete config[knob];
  for (const secretPath of input.secretPaths) deletePath(config, secretPath);
  return { provider: input.provider, config };
}

/** Canonical JSON (object keys sorted at every depth): equal boot sources give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** Dotted paths where two boot sources differ (`provider` for a provider change). */
export function bootSourceDrift(before: BootSource, after: BootSource): string[] {
  const paths: string[] = [];
  if (before.provider !== after.provider) paths.push('provider');
  diff(before.config, after.config, 'config', paths);
  return paths;
}

function diff(a: unknown, b: unknown, path: string, out: string[]): void {
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) diff(a[key], b[key], `${path}.${key}`, out);
    return;
  }
  if (canonicalJson(a) !== canonicalJson(b)) out.push(path);
}

function deletePath(target: Record<string, unknown>, dotted: string): void {
  const keys = dotted.split('.');
  const last = keys.pop()!;
  let node: unknown = target;
  for (const key of keys) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  if (node && typeof node === 'object') delete (node as Record<string, unknown>)[last];
}
