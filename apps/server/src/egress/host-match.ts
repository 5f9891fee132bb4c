import type { SandboxContainment } from '@sandcast/core';

/**
 * A host name as the proxy compares it: lower case, one trailing dot dropped (`Example.COM.` is
 * `example.com`), brackets kept off IPv6 literals. Null for what is no host at all (empty, a
 * space, an empty label, a character a name or literal never has).
 */
export function normalizeHost(host: string): string | null {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (
    name === '' ||
    name.length > 253 ||
    name.endsWith('.') ||
    name.startsWith('.') ||
    name.includes('..') ||
    !/^[a-z0-9.:_-]+$/.test(name)
  )
    return null;
  return name;
}

/**
 * Whether an allowlist pattern covers `host` (already normalised). `example.com` is that host
 * only; `*.example.com` is every name below it (`a.example.com`, `a.b.example.com`) but not
 * `example.com` itself — list both to allow both.
 */
export function patternMatches(pattern: string, host: string): boolean {
  const wildcard = pattern.startsWith('*.');
  const base = normalizeHost(wildcard ? pattern.slice(2) : pattern);
  if (!base) return false;
  return wildcard ? host.endsWith(`.${base}`) && host.length > base.length + 1 : host === base;
}

/** Whether the sandbox's containment lets it ask for `host` at all (addresses are checked after). */
export function hostPermitted(containment: SandboxContainment, host: string): boolean {
  if (containment.network === 'allow') return true;
  if (containment.network === 'deny') return false;
  return containment.hosts.some((pattern) => patternMatches(pattern, host));
}
