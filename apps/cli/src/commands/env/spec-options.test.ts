import { describe, expect, it } from 'vitest';
import { UsageError } from '../../format.ts';
import { renderEnvironment } from './render.ts';
import { specFrom } from './spec-options.ts';

const current = {
  displayName: 'Build box',
  description: null,
  durability: 'none' as const,
  lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' as const },
  bootstrap: ['make deps'],
  containment: { network: 'deny' as const, hosts: [] },
  workspacePath: '/workspace',
  warmPool: { size: 0, maxAgeSeconds: 3600 },
};

describe('spec flags', () => {
  it('no spec flag sends no spec', () => {
    expect(specFrom({})).toBeUndefined();
    expect(specFrom({}, current)).toBeUndefined();
  });

  it('each flag sets its field; "" clears a text field', () => {
    expect(
      specFrom({ displayName: 'Box', description: '', durability: 'checkpointed', idleAfter: '600', idleAction: 'keep_running' }),
    ).toEqual({
      displayName: 'Box',
      description: null,
      durability: 'checkpointed',
      lifecycle: { idleAfterSeconds: 600, idleAction: 'keep_running' },
    });
    // Only the lifecycle field given is sent: the server keeps the other.
    expect(specFrom({ idleAction: 'stop' })).toEqual({ lifecycle: { idleAction: 'stop' } });
  });

  it('--bootstrap adds to the current commands; --bootstrap-clear starts from none', () => {
    expect(specFrom({ bootstrap: ['make test'] }, current)).toEqual({ bootstrap: ['make deps', 'make test'] });
    expect(specFrom({ bootstrap: ['make test'], bootstrapClear: true }, current)).toEqual({ bootstrap: ['make test'] });
    expect(specFrom({ bootstrapClear: true }, current)).toEqual({ bootstrap: [] });
  });

  it('--network sets the egress policy; --allow-host adds to the allowlist (and implies it)', () => {
    expect(specFrom({ network: 'allow' }, current)).toEqual({ containment: { network: 'allow', hosts: [] } });
    expect(specFrom({ allowHost: ['*.npmjs.org'] }, current)).toEqual({ containment: { network: 'allowlist', hosts: ['*.npmjs.org'] } });
    const listed = { ...current, containment: { network: 'allowlist' as const, hosts: ['github.com'] } };
    expect(specFrom({ allowHost: ['*.npmjs.org', 'github.com'] }, listed)).toEqual({
      containment: { network: 'allowlist', hosts: ['github.com', '*.npmjs.org'] },
    });
    expect(specFrom({ allowHostsClear: true, allowHost: ['a.test'] }, listed)).toEqual({
      containment: { network: 'allowlist', hosts: ['a.test'] },
    });
    expect(specFrom({ network: 'deny' }, listed)).toEqual({ containment: { network: 'deny', hosts: [] } });
    expect(() => specFrom({ network: 'allow', allowHost: ['a.test'] })).toThrow(/--allow-host needs --network allowlist/);
  });

  it.each(['1.5', '-3', 'ten', ''])('--idle-after %j is a usage mistake', (raw) => {
    expect(() => specFrom({ idleAfter: raw })).toThrow(UsageError);
  });
});

describe('env show', () => {
  it('prints the spec, field by field', () => {
    const text = renderEnvironment({
      id: 'env_1',
      name: 'build',
      provider: 'fake',
      connectionId: null,
      config: {},
      spec: {
        ...current,
        bootstrap: ['make deps', 'make\ncheck'],
        lifecycle: { idleAfterSeconds: 3600, idleAction: 'checkpoint_and_stop' },
      },
      currentRevision: { id: 'rev_1', number: 1, createdAt: '2026-01-01T00:00:00Z' },
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
    });
    expect(text).toContain(
      [
        'spec:',
        '  display name: Build box',
        '  description:  -',
        '  durability:   none',
        '  when idle:    checkpoints and stops after 1 h without activity',
        '  bootstrap:',
        '    1. make deps',
        '    2. make',
        '       check',
        '  network:      deny (no route out)',
      ].join('\n'),
    );
  });
});
