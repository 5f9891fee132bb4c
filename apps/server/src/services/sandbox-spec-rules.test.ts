import { DEFAULT_SANDBOX_SPEC } from '@sandcast/core';
import { ON_HOST_PROVIDER_CAPABILITIES } from '@sandcast/provider-sdk';
import { describe, expect, it } from 'vitest';
import { mergeSpec, specFromInput, specIssues } from './sandbox-spec-rules.ts';

const local = { id: 'local', capabilities: ON_HOST_PROVIDER_CAPABILITIES };

describe('the environment spec rules', () => {
  it('fills defaults, and merges an edit field by field (the lifecycle too)', () => {
    expect(specFromInput(undefined)).toEqual(DEFAULT_SANDBOX_SPEC);
    const base = specFromInput({ bootstrap: ['make'], lifecycle: { idleAction: 'keep_running' } });
    expect(base.lifecycle).toEqual({ idleAfterSeconds: 180, idleAction: 'keep_running' });
    const merged = mergeSpec(base, { lifecycle: { idleAfterSeconds: 60 }, description: 'd' });
    expect(merged).toEqual({ ...base, description: 'd', lifecycle: { idleAfterSeconds: 60, idleAction: 'keep_running' } });
    expect(mergeSpec(base, { displayName: null, bootstrap: [] })).toMatchObject({ displayName: null, bootstrap: [] });
    // The input is never aliased into the result.
    const input = { bootstrap: ['a'] };
    const out = mergeSpec(base, input);
    input.bootstrap.push('b');
    expect(out.bootstrap).toEqual(['a']);
  });

  it('refuses a durability the provider does not declare, with the words the operator reads', () => {
    const plain = { id: 'daytona', capabilities: { ...ON_HOST_PROVIDER_CAPABILITIES, durabilities: ['none' as const] } };
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, durability: 'checkpointed' }, plain)).toEqual([
      { path: 'spec.durability', message: 'the daytona provider cannot honour durability checkpointed; it offers: none' },
    ]);
    // The on-host providers checkpoint through Sandcast; none of them has provider snapshots.
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, durability: 'checkpointed' }, local)).toEqual([]);
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, durability: 'provider_snapshot' }, local)[0]?.message).toBe(
      'the local provider cannot honour durability provider_snapshot; it offers: none, checkpointed',
    );
    const durable = {
      id: 'x',
      capabilities: { ...ON_HOST_PROVIDER_CAPABILITIES, durabilities: ['none' as const, 'checkpointed' as const] },
    };
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, durability: 'checkpointed' }, durable)).toEqual([]);
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, durability: 'provider_snapshot' }, durable)[0]?.message).toContain(
      'it offers: none, checkpointed',
    );
  });

  it('refuses credentials in bootstrap, and egress where the provider cannot enforce it', () => {
    const allowlist = { network: 'allowlist' as const, hosts: ['example.com'] };
    const issues = specIssues(
      {
        ...DEFAULT_SANDBOX_SPEC,
        bootstrap: ['echo fine', 'export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
        containment: allowlist,
      },
      local,
    );
    expect(issues.map((i) => i.path)).toEqual(['spec.bootstrap.1']);
    const remote = { id: 'daytona', capabilities: { ...ON_HOST_PROVIDER_CAPABILITIES, egressProxy: false } };
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, containment: { network: 'allow', hosts: [] } }, remote)).toEqual([
      {
        path: 'spec.containment.network',
        message:
          'the daytona provider cannot put the egress proxy inside its sandboxes, so "allow" cannot be enforced there; use "deny" or an on-host provider (local, docker)',
      },
    ]);
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, containment: { network: 'deny', hosts: [] } }, remote)).toEqual([]);
    expect(specIssues({ ...DEFAULT_SANDBOX_SPEC, containment: { network: 'allowlist', hosts: [] } }, local)[0]?.path).toBe(
      'spec.containment.hosts',
    );
  });

  it('refuses egress when the config gives the sandbox a network of its own beside the proxy', () => {
    const spec = { ...DEFAULT_SANDBOX_SPEC, containment: { network: 'allow' as const, hosts: [] } };
    expect(specIssues(spec, local, { network: 'none' })).toEqual([]);
    for (const network of ['host', 'bridge']) {
      expect(specIssues(spec, local, { network })[0]?.message).toContain(`the config's network is "${network}"`);
    }
    expect(specIssues(DEFAULT_SANDBOX_SPEC, local, { network: 'host' })).toEqual([]);
  });
});
