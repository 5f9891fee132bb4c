import type { SessionSandboxBody } from '@sandcast/contracts';
import { describe, expect, it } from 'vitest';
import { describeState } from '../sandbox/render.ts';
import { renderSession, renderSessionSandbox } from './render.ts';
import { sandboxRequestFrom } from './start.ts';

const view: SessionSandboxBody = {
  sandboxId: 'sbx_1',
  sessionId: 'ses_1',
  environmentId: 'env_1',
  environmentRevisionId: 'rev_2',
  environmentRevisionNumber: 2,
  imageId: null,
  bindingName: 'build',
  target: { provider: 'fake' },
  containment: { network: 'deny', hosts: [], networkEnforced: true },
  durability: 'none',
  recoveryClass: 'none: the workspace is lost with the compute',
  lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' },
  capabilities: { nativeProcesses: true, packages: false, pty: true, ports: true, portableCheckpoint: false, networkEnforced: true },
  desiredState: 'stopped',
  observedState: 'running',
  failureReason: null,
  generation: 2,
  currentCheckpointId: null,
  lastActivityAt: new Date().toISOString(),
  allowedActions: ['exec', 'stop', 'end'],
};

describe('session sandbox', () => {
  it('prints every field of the Workspace view', () => {
    expect(renderSessionSandbox(view, 'dev').split('\n')).toEqual([
      'sandbox:       sbx_1',
      'session:       ses_1',
      'binding:       build',
      'environment:   dev (env_1)',
      'revision:      2 (rev_2) (pinned)',
      'image:         base (no custom image)',
      'target:        fake',
      'containment:   deny (no route out), enforced by the provider',
      'capabilities:  native processes, terminal, ports, network enforcement; not: packages, portable checkpoints',
      'durability:    none',
      'recovery:      none: the workspace is lost with the compute',
      'when idle:     stops after 3 min without activity',
      'state:         running, desired stopped (being stopped)',
      'generation:    2',
      'checkpoint:    none',
      expect.stringMatching(/^last activity: just now \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/),
      'allowed:       exec, stop, end',
    ]);
  });

  it('a failure, a custom image and a deleted environment are said', () => {
    const text = renderSessionSandbox({
      ...view,
      environmentId: null,
      imageId: 'tpl_1',
      failureReason: 'the provider lost it',
      allowedActions: [],
    });
    expect(text).toContain('environment:   deleted');
    expect(text).toContain('image:         custom image tpl_1');
    expect(text).toContain('failure:       the provider lost it');
    expect(text).toContain('allowed:       none');
  });
});

describe('observed against desired', () => {
  it.each([
    ['running', 'ready', 'running (desired ready)'],
    ['stopped', 'stopped', 'stopped (desired stopped)'],
    ['stopped', 'ready', 'stopped, desired ready (being started)'],
    ['running', 'deleted', 'running, desired deleted (being deleted)'],
    ['lost', 'ready', 'lost (desired ready)'],
  ] as const)('%s / %s', (observed, desired, words) => {
    expect(describeState(observed, desired)).toBe(words);
  });
});

describe('session show', () => {
  it('names the agent and its version when known, the ids otherwise', () => {
    const session = {
      id: 'ses_1',
      agentId: 'agt_1',
      agentVersionId: 'agv_3',
      status: 'ended' as const,
      primarySandboxId: null,
      bindingName: null,
      createdAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:05:00Z',
    };
    const known = renderSession(session, { name: 'coder', versionNumber: 3 });
    expect(known).toContain('agent:    coder (agt_1), version 3 (agv_3)');
    expect(known).toMatch(/^status: +ended \d+ d ago \(2026-01-01T00:05:00Z\)$/m);
    expect(known).toContain('sandbox:  none (the agent has no sandbox)');
    expect(renderSession(session)).toContain('agent:    agt_1, agv_3');
  });
});

describe('session start flags', () => {
  it('nothing: the default binding; --use: a binding; --inline-…: a one-off spec over --use', () => {
    expect(sandboxRequestFrom({})).toBeUndefined();
    expect(sandboxRequestFrom({ use: 'build' })).toEqual({ use: 'build' });
    expect(sandboxRequestFrom({ inlineConfig: ['cpu=2', 'image=debian'] })).toEqual({ inline: { config: { cpu: 2, image: 'debian' } } });
    expect(sandboxRequestFrom({ use: 'build', inlineBootstrap: ['make'], inlineIdleAfter: '60' })).toEqual({
      inline: { use: 'build', bootstrap: ['make'], lifecycle: { idleAfterSeconds: 60 } },
    });
  });

  it('malformed values are usage mistakes naming their flag', () => {
    expect(() => sandboxRequestFrom({ inlineConfig: ['cpu'] })).toThrow('--inline-config takes key=value, got "cpu"');
    expect(() => sandboxRequestFrom({ inlineIdleAfter: 'soon' })).toThrow('--inline-idle-after takes a whole number of seconds');
  });
});
