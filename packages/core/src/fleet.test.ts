import { describe, expect, it } from 'vitest';
import type { Sandbox } from './custom-image.ts';
import { fleetReservationOf, sandboxAttention } from './fleet.ts';
import { withSpecDefaults } from './sandbox-spec.ts';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const sandbox = (overrides: Partial<Sandbox>): Sandbox =>
  ({
    id: 'sbx_1',
    status: 'running',
    desiredStatus: 'ready',
    providerInstanceId: 'inst_1',
    lastActivityAt: '2026-01-01T11:59:00.000Z',
    spec: withSpecDefaults({ lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' } }),
    ...overrides,
  }) as Sandbox;

describe('sandboxAttention', () => {
  it('flags nothing for a busy running sandbox', () => {
    expect(sandboxAttention(sandbox({}), NOW, false)).toEqual([]);
  });

  it('flags lost and failed from the observed state', () => {
    expect(sandboxAttention(sandbox({ status: 'lost' }), NOW, false)).toEqual(['lost']);
    expect(sandboxAttention(sandbox({ status: 'failed', providerInstanceId: null }), NOW, false)).toEqual(['failed']);
  });

  it('flags idle_running past the idle window only while it should run', () => {
    const idle = { lastActivityAt: '2026-01-01T11:50:00.000Z' };
    expect(sandboxAttention(sandbox(idle), NOW, false)).toEqual(['idle_running']);
    expect(sandboxAttention(sandbox({ ...idle, desiredStatus: 'stopped' }), NOW, false)).toEqual([]);
    expect(sandboxAttention(sandbox({ lastActivityAt: '2026-01-01T11:57:30.000Z' }), NOW, false)).toEqual([]);
  });

  it('flags cleanup_failed when it should be gone and its compute is still recorded', () => {
    expect(sandboxAttention(sandbox({ desiredStatus: 'deleted', status: 'stopped' }), NOW, false)).toEqual(['cleanup_failed']);
    expect(sandboxAttention(sandbox({ status: 'stopped' }), NOW, true)).toEqual(['cleanup_failed']);
    expect(sandboxAttention(sandbox({ desiredStatus: 'deleted', status: 'deleted' }), NOW, true)).toEqual([]);
    expect(sandboxAttention(sandbox({ status: 'failed', providerInstanceId: null }), NOW, true)).toEqual(['failed']);
  });
});

describe('fleetReservationOf', () => {
  it('takes cpu and memoryMb from the config, the default for what it does not set', () => {
    expect(fleetReservationOf({ cpu: 2, memoryMb: 512 })).toEqual({ cpu: 2, memoryMb: 512 });
    expect(fleetReservationOf({})).toEqual({ cpu: 1, memoryMb: 1024 });
    expect(fleetReservationOf({ cpu: -4, memoryMb: 'lots' })).toEqual({ cpu: 1, memoryMb: 1024 });
  });
});
