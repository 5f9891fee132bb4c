import { ProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import { describe, expect, it } from 'vitest';
import { instrumentProvider } from './instrument-providers.ts';
import type { Metrics } from './metrics.ts';
import { createMetrics } from './metrics.ts';

/** The database gauges read an empty database. */
const emptyCounts = { sandboxes: async () => new Map(), setupSessions: async () => new Map() };
const metrics = (): Metrics => createMetrics({ store: { repos: { statusCounts: emptyCounts } } as never });

async function count(m: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

/** A provider double: only what the wrapper touches. */
function provider(overrides: Record<string, unknown>): SandboxProvider {
  return { id: 'p', displayName: 'P', capabilities: {}, ...overrides } as unknown as SandboxProvider;
}

describe('instrumentProvider', () => {
  it('times operations that resolve, keeping their value and `this`', async () => {
    const m = metrics();
    const target = provider({
      secret: 41,
      async inspect(this: { secret: number }, id: string) {
        return { id, n: this.secret + 1 };
      },
    });
    const wrapped = instrumentProvider(target, m);
    expect(await wrapped.inspect('i-1')).toEqual({ id: 'i-1', n: 42 });
    expect(await count(m, 'sandcast_provider_call_duration_seconds', { provider: 'p', operation: 'inspect', le: '+Inf' })).toBe(1);
    expect(await count(m, 'sandcast_provider_call_errors_total', { operation: 'inspect' })).toBe(0);
  });

  it('counts a rejection by its ProviderError code, anything else as other, and rethrows it', async () => {
    const m = metrics();
    const wrapped = instrumentProvider(
      provider({
        destroy: async () => {
          throw new ProviderError({ provider: 'p', code: 'not_found', message: 'gone' });
        },
        exec: () => {
          throw new TypeError('a bug, thrown before any promise');
        },
      }),
      m,
    );
    await expect(wrapped.destroy('i-1')).rejects.toThrow('gone');
    expect(() => wrapped.exec('i-1', { command: ['true'] })).toThrow('a bug');
    expect(await count(m, 'sandcast_provider_call_errors_total', { operation: 'destroy', code: 'not_found' })).toBe(1);
    expect(await count(m, 'sandcast_provider_call_errors_total', { operation: 'exec', code: 'other' })).toBe(1);
    expect(await count(m, 'sandcast_provider_call_duration_seconds', { operation: 'exec', le: '+Inf' })).toBe(1);
  });

  it('passes members outside the contract through untouched and unmeasured', async () => {
    const m = metrics();
    const images = { list: async () => ['base'] };
    const wrapped = instrumentProvider(provider({ images }), m) as unknown as { images: typeof images; id: string };
    expect(wrapped.images).toBe(images);
    expect(wrapped.id).toBe('p');
    expect(await wrapped.images.list()).toEqual(['base']);
    const series = (await m.registry.getMetricsAsJSON()).find((x) => x.name === 'sandcast_provider_call_duration_seconds');
    expect(series?.values).toEqual([]);
  });
});
