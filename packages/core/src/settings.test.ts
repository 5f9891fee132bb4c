import { describe, expect, it } from 'vitest';
import { allows } from './access.ts';
import { DEFAULT_INSTANCE_SETTINGS, mergeSettings } from './settings.ts';

describe('mergeSettings', () => {
  it('keeps fields the patch does not name', () => {
    const next = mergeSettings(DEFAULT_INSTANCE_SETTINGS, { experimental: { enableEnvironments: true } });
    expect(next).toEqual({
      experimental: { enableEnvironments: true, enableSandboxDuplexBridge: false },
      security: { allowHostNetwork: false, allowPublicPorts: false },
      egress: { allowPrivateHosts: [] },
      sessions: { inlineProviders: [], inlineConfigFields: ['cpu', 'memoryMb'], checkpointRetention: 20 },
      fleet: { maxSandboxesPerSession: 5, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 },
    });
    expect(mergeSettings(next, { experimental: { enableEnvironments: undefined } }).experimental.enableEnvironments).toBe(true);
  });
});

describe('allows', () => {
  it('lets admins anywhere, agents only on agent and public routes, anonymous only on public', () => {
    const admin = { role: 'admin', keyId: 'k1' } as const;
    const agent = { role: 'agent', keyId: 'k2' } as const;
    expect([allows('public', null), allows('agent', null), allows('admin', null)]).toEqual([true, false, false]);
    expect([allows('public', agent), allows('agent', agent), allows('admin', agent)]).toEqual([true, true, false]);
    expect([allows('public', admin), allows('agent', admin), allows('admin', admin)]).toEqual([true, true, true]);
  });
});
