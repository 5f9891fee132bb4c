import { load } from 'js-yaml';

/**
 * Fields of a kubeconfig that make the Sandcast server read its own files or run programs: a
 * kubeconfig comes from an operator over the API, so it may only carry its credentials inline.
 */
const REFUSED = {
  cluster: { 'certificate-authority': 'inline the CA as certificate-authority-data' },
  user: {
    'client-certificate': 'inline it as client-certificate-data',
    'client-key': 'inline it as client-key-data',
    'token-file': 'inline the token as token',
    exec: 'use a service-account token (kubectl create token) instead of an exec credential plugin',
    'auth-provider': 'use a service-account token (kubectl create token) instead of an auth provider',
  },
} as const;

/** What is wrong with a kubeconfig the server would load, in the operator's words; empty when nothing. */
export function kubeconfigIssues(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = load(text, { json: true });
  } catch (error) {
    return [`not YAML: ${(error as Error).message.split('\n')[0]}`];
  }
  if (!parsed || typeof parsed !== 'object') return ['not a kubeconfig (expected a YAML mapping with clusters, users and contexts)'];
  const config = parsed as { clusters?: unknown; users?: unknown };
  const issues: string[] = [];
  const entries = (list: unknown, key: 'cluster' | 'user') =>
    (Array.isArray(list) ? list : []).map((entry: unknown) => {
      const named = (entry ?? {}) as Record<string, unknown>;
      return { name: String(named.name ?? '?'), fields: (named[key] ?? {}) as Record<string, unknown> };
    });
  for (const [key, list] of [
    ['cluster', config.clusters],
    ['user', config.users],
  ] as const) {
    for (const { name, fields } of entries(list, key)) {
      for (const [field, fix] of Object.entries(REFUSED[key])) {
        if (fields[field] !== undefined) issues.push(`${key} "${name}" uses ${field}: ${fix}`);
      }
    }
  }
  if (!Array.isArray(config.clusters) || config.clusters.length === 0) issues.push('it names no cluster');
  return issues;
}
