import { describe, expect, it } from 'vitest';
import { customImageMachine } from './custom-image.machine.ts';
import { isRunningSetup, type SetupSession } from './custom-image.ts';
import { isSandcastError } from './errors.ts';
import { InvalidTransition, type Machine } from './machine.ts';
import { sandboxMachine } from './sandbox.machine.ts';
import { SETUP_SESSION_STATUSES, setupSessionMachine } from './setup-session.machine.ts';

/** The tables as the architecture states them; a change to a machine must change this too. */
const EXPECTED: Record<string, Array<[string, string]>> = {
  'setup session': [
    ['starting', 'waiting_for_user'],
    ['starting', 'failed'],
    ['starting', 'cancelled'],
    ['starting', 'timed_out'],
    ['waiting_for_user', 'capturing'],
    ['waiting_for_user', 'cancelled'],
    ['waiting_for_user', 'timed_out'],
    ['waiting_for_user', 'failed'],
    ['capturing', 'promoted'],
    ['capturing', 'failed'],
  ],
  'custom image': [
    ['active', 'superseded'],
    ['active', 'revoked'],
    ['superseded', 'active'],
  ],
  sandbox: [
    ['starting', 'running'],
    ['starting', 'failed'],
    ['starting', 'lost'],
    ['starting', 'deleted'],
    ['running', 'stopped'],
    ['running', 'lost'],
    ['running', 'failed'],
    ['running', 'deleted'],
    ['stopped', 'starting'],
    ['stopped', 'lost'],
    ['stopped', 'deleted'],
    ['lost', 'starting'],
    ['lost', 'deleted'],
    ['failed', 'deleted'],
  ],
};

const machines = [setupSessionMachine, customImageMachine, sandboxMachine] as Array<Machine<string>>;

for (const machine of machines) {
  describe(`${machine.name} machine`, () => {
    const edges = new Set(machine.edges().map(([from, to]) => `${from}→${to}`));

    it('has exactly the edges the architecture describes', () => {
      expect([...edges].sort()).toEqual(EXPECTED[machine.name]!.map(([from, to]) => `${from}→${to}`).sort());
    });

    // Every ordered pair of statuses: an edge is allowed, anything else is refused.
    for (const from of machine.statuses) {
      for (const to of machine.statuses) {
        const allowed = edges.has(`${from}→${to}`);
        it(`${allowed ? 'allows' : 'refuses'} ${from} → ${to}`, () => {
          expect(machine.can(from, to)).toBe(allowed);
          expect(machine.sourcesOf(to).includes(from)).toBe(allowed);
          if (allowed) {
            expect(machine.transition(from, to)).toBe(to);
            return;
          }
          const refusal = (() => {
            try {
              machine.transition(from, to);
            } catch (error) {
              return error;
            }
            return null;
          })();
          expect(refusal).toBeInstanceOf(InvalidTransition);
          expect(isSandcastError(refusal)).toBe(true);
          expect(refusal).toMatchObject({ code: 'invalid_transition', details: { machine: machine.name, from, to } });
        });
      }
    }

    it('reaches every status from the first one', () => {
      const reached = new Set([machine.statuses[0]]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const [from, to] of machine.edges()) {
          if (reached.has(from) && !reached.has(to)) {
            reached.add(to);
            grew = true;
          }
        }
      }
      // A custom image's `failed` is inserted as such, never reached.
      const inserted = machine.name === 'custom image' ? ['failed'] : [];
      expect([...reached, ...inserted].sort()).toEqual([...machine.statuses].sort());
    });
  });
}

describe('isRunningSetup', () => {
  const base = { providerLeaseId: 'lease-1' } as SetupSession;
  it('holds only for a waiting_for_user session that has a sandbox lease', () => {
    for (const status of SETUP_SESSION_STATUSES) {
      expect(isRunningSetup({ ...base, status })).toBe(status === 'waiting_for_user');
    }
    expect(isRunningSetup({ ...base, status: 'waiting_for_user', providerLeaseId: null })).toBe(false);
    expect(isRunningSetup({ ...base, status: 'waiting_for_user', providerLeaseId: '' })).toBe(false);
    expect(isRunningSetup(null)).toBe(false);
  });
});
