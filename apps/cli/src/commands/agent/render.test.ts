import type { AgentBody, AgentVersionBody } from '@sandcast/contracts';
import { describe, expect, it } from 'vitest';
import { describeAgentChanges, renderAgent, renderAgentList } from './render.ts';
import type { RevisionInfo } from './revision-index.ts';

const version = (number: number, policy: AgentVersionBody['sandboxPolicy'], capabilities: AgentVersionBody['capabilities'] = []) => ({
  id: `agv_${number}`,
  agentId: 'agt_1',
  number,
  sandboxPolicy: policy,
  capabilities,
  createdAt: new Date().toISOString(),
});

const agent = (v: AgentVersionBody, over: Partial<AgentBody> = {}): AgentBody => ({
  id: 'agt_1',
  name: 'coder',
  displayName: null,
  description: null,
  currentVersion: v,
  archivedAt: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...over,
});

const index = new Map<string, RevisionInfo>([
  ['rev_2', { environmentName: 'dev', number: 2, currentNumber: 3, durability: 'none' }],
  ['rev_3', { environmentName: 'dev', number: 3, currentNumber: 3, durability: 'checkpointed' }],
]);

const selectable = version(2, {
  mode: 'selectable',
  default: 'scratch',
  bindings: { scratch: { environmentRevisionId: 'rev_2' }, build: { environmentRevisionId: 'rev_9', durability: 'provider_snapshot' } },
});

describe('agent show', () => {
  it('names each binding’s environment and revision, says which is the default and where durability comes from', () => {
    const text = renderAgent(agent(selectable), [selectable, version(1, { mode: 'none', default: null, bindings: {} })], index);
    expect(text).toMatch(/^mode: +selectable — a session may pick a binding \(session start --use NAME\)$/m);
    expect(text).toMatch(/^ +scratch \(default\) +dev rev 2 \(current is 3\) +none \(the revision's\) +rev_2$/m);
    // A revision the index does not know reads as its id.
    expect(text).toMatch(/^ +build +rev_9 +provider_snapshot \(set on the binding\) +rev_9$/m);
    expect(text).toMatch(/^ +2 +selectable +scratch +build, scratch +no +just now/m);
    expect(text).toMatch(/^ +1 +none +- +- +no/m);
  });

  it('an agent without a sandbox lists no bindings; an archived one says so', () => {
    const text = renderAgent(
      agent(version(1, { mode: 'none', default: null, bindings: {} }), { archivedAt: new Date().toISOString() }),
      [],
      index,
    );
    expect(text).not.toContain('BINDING');
    expect(text).toMatch(/^status: +archived just now/m);
  });

  it('agent list: one row each, archived ones marked', () => {
    expect(renderAgentList([agent(selectable, { archivedAt: '2026-01-02T00:00:00Z' })])).toMatch(
      /^coder +selectable +build, scratch +scratch +2 +archived +agt_1$/m,
    );
  });
});

describe('agent update', () => {
  it('says what changed and the new version', () => {
    const after = agent(
      version(
        3,
        {
          mode: 'configurable',
          default: 'build',
          bindings: {
            scratch: { environmentRevisionId: 'rev_3' },
            build: { environmentRevisionId: 'rev_9' },
            big: { environmentRevisionId: 'rev_3' },
          },
        },
        ['sandbox_fleet'],
      ),
      { displayName: 'Coder' },
    );
    expect(describeAgentChanges(agent(selectable), after, index)).toEqual([
      'display name: - → "Coder"',
      'mode: selectable → configurable',
      'default: scratch → build',
      '+ big: dev rev 3 (current)',
      "~ build durability: provider_snapshot → the revision's",
      '~ scratch: dev rev 2 (current is 3) → dev rev 3 (current)',
      'fleet: no → yes',
      'version 2 → 3',
    ]);
  });

  it('a name-only change makes no version, and says so', () => {
    expect(describeAgentChanges(agent(selectable), agent(selectable, { description: 'writes code' }), index)).toEqual([
      'description: - → "writes code"',
      'version 2 (no new version: only the display name or description changed)',
    ]);
  });
});
