import { createHash } from 'node:crypto';
import { type BootSource, bootSourceOf, canonicalJson } from '@sandcast/core';
import type { RegisteredProvider } from '../providers/provider-registry.ts';

/** What an image was built from, as the provider sees it: config minus runtime knobs and secrets. */
export function bootSourceFor(registered: RegisteredProvider, provider: string, config: Record<string, unknown>): BootSource {
  return bootSourceOf({ provider, config, runtimeKnobs: registered.provider.runtimeKnobs, secretPaths: registered.secretPaths });
}

export function fingerprintOf(bootSource: BootSource): string {
  return `sha256:${createHash('sha256').update(canonicalJson(bootSource)).digest('hex')}`;
}
