import { describe, expect, it } from 'vitest';
import { decideTransport } from './gate.ts';

describe('decideTransport', () => {
  it('is duplex only when the setting and the capability are both exactly true', () => {
    expect(decideTransport({ settingEnabled: true, capability: true })).toEqual({ transport: 'duplex_v1' });
    expect(decideTransport({ settingEnabled: false, capability: true })).toEqual({ transport: 'queue_v1', reason: 'gate_off' });
    expect(decideTransport({ settingEnabled: 'true', capability: true })).toEqual({ transport: 'queue_v1', reason: 'gate_off' });
    expect(decideTransport({ settingEnabled: undefined, capability: false })).toEqual({ transport: 'queue_v1', reason: 'gate_off' });
    expect(decideTransport({ settingEnabled: true, capability: 1 })).toEqual({ transport: 'queue_v1', reason: 'capability_absent' });
    expect(decideTransport({ settingEnabled: true, capability: undefined })).toEqual({
      transport: 'queue_v1',
      reason: 'capability_absent',
    });
  });
});
