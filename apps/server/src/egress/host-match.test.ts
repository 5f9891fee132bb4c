import { describe, expect, it } from 'vitest';
import { hostPermitted, normalizeHost, patternMatches } from './host-match.ts';

describe('host matching', () => {
  it.each([
    ['example.com', 'example.com', true],
    ['example.com', 'EXAMPLE.com.', true],
    ['example.com', 'www.example.com', false],
    ['*.npmjs.org', 'registry.npmjs.org', true],
    ['*.npmjs.org', 'a.b.npmjs.org', true],
    ['*.npmjs.org', 'REGISTRY.NPMJS.ORG.', true],
    ['*.npmjs.org', 'npmjs.org', false],
    ['*.npmjs.org', 'evilnpmjs.org', false],
    ['*.npmjs.org', 'npmjs.org.evil.com', false],
    ['*.NPMJS.org', 'x.npmjs.org', true],
    ['example.com', 'example.com..', false],
    ['example.com', '.example.com', false],
  ])('%s covers %s: %s', (pattern, host, expected) => {
    const normalized = normalizeHost(host);
    expect(normalized !== null && patternMatches(pattern, normalized)).toBe(expected);
  });

  it('normalises case, one trailing dot and IPv6 brackets; refuses what is no host', () => {
    expect(normalizeHost('Example.COM.')).toBe('example.com');
    expect(normalizeHost('[::1]')).toBe('::1');
    for (const bad of ['', ' ', 'a..b', 'a b', 'exa/mple', 'x'.repeat(254), '.']) expect(normalizeHost(bad)).toBeNull();
  });

  it('applies the containment: deny nothing, allow everything, an allowlist its hosts', () => {
    expect(hostPermitted({ network: 'deny', hosts: ['example.com'] }, 'example.com')).toBe(false);
    expect(hostPermitted({ network: 'allow', hosts: [] }, 'anything.test')).toBe(true);
    expect(hostPermitted({ network: 'allowlist', hosts: ['a.test', '*.b.test'] }, 'x.b.test')).toBe(true);
    expect(hostPermitted({ network: 'allowlist', hosts: ['a.test', '*.b.test'] }, 'c.test')).toBe(false);
  });
});
