import {
  customImageMachine,
  InvalidTransition,
  type Machine,
  type SandboxStatus,
  type SetupSessionStatus,
  sandboxMachine,
  setupSessionMachine,
} from '@sandcast/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from './store.ts';
import { insertSetupSession } from './testing/fixtures.ts';
import { testDatabases } from './testing/test-databases.ts';

/** The shortest walk along the machine's edges from `start` to `target`. */
function pathTo<S extends string>(machine: Machine<S>, start: S, target: S): S[] {
  const previous = new Map<S, S | null>([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === target) break;
    for (const [from, to] of machine.edges()) {
      if (from === at && !previous.has(to)) {
        previous.set(to, at);
        queue.push(to);
      }
    }
  }
  if (!previous.has(target)) throw new Error(`${machine.name}: ${target} is unreachable from ${start}`);
  const steps: S[] = [];
  for (let s: S | null = target; s !== null && s !== start; s = previous.get(s) ?? null) steps.unshift(s);
  return steps;
}

/** Runs `write`, returning what it threw (or null). */
const thrown = async (write: () => Promise<unknown>) =>
  write().then(
    () => null,
    (error: unknown) => error,
  );

let counter = 0;

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`repositories gate status changes on the core machines [${database.kind}]`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await database.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    const newEnvironment = () => store.repos.environments.insert({ name: `machine-${++counter}`, provider: 'fake', config: {} });

    /** A session of its own environment (one active session per environment), walked to `status`. */
    const sessionIn = async (status: SetupSessionStatus) => {
      const env = await newEnvironment();
      const session = await insertSetupSession(store, env);
      for (const step of pathTo(setupSessionMachine, 'starting', status)) {
        expect(await store.repos.setupSessions.transition(session.id, step, { providerLeaseId: 'lease' })).toMatchObject({ status: step });
      }
      return session.id;
    };

    describe('setup sessions', () => {
      for (const from of setupSessionMachine.statuses) {
        for (const to of setupSessionMachine.statuses) {
          const allowed = setupSessionMachine.can(from, to);
          it(`${allowed ? 'moves' : 'refuses with a typed 409'} ${from} → ${to}`, async () => {
            const id = await sessionIn(from);
            if (allowed) {
              expect(await store.repos.setupSessions.transition(id, to)).toMatchObject({ status: to });
              return;
            }
            const error = await thrown(() => store.repos.setupSessions.transition(id, to, { failureReason: 'nope', finished: true }));
            expect(error).toBeInstanceOf(InvalidTransition);
            expect(error).toMatchObject({ code: 'invalid_transition', details: { machine: 'setup session', from, to } });
            expect(await store.repos.setupSessions.get(id)).toMatchObject({ status: from, failureReason: null });
          });
        }
      }

      it('answers null, not a refusal, when only the expiry guard failed or the session does not exist', async () => {
        const id = await sessionIn('waiting_for_user');
        const later = new Date(Date.now() + 7_200_000);
        expect(await store.repos.setupSessions.transition(id, 'capturing', {}, { unexpiredAt: later })).toBeNull();
        expect((await store.repos.setupSessions.get(id))?.status).toBe('waiting_for_user');
        expect(await store.repos.setupSessions.transition('setup_missing', 'capturing')).toBeNull();
      });

      it('a refused edge inside a transaction rolls the transaction back', async () => {
        const id = await sessionIn('promoted');
        const env = await newEnvironment();
        const error = await thrown(() =>
          store.transaction(async (repos) => {
            await repos.environments.update(env.id, { name: `${env.name}-renamed`, expectedRevisionId: env.currentRevision.id });
            await repos.setupSessions.transition(id, 'cancelled');
          }),
        );
        expect(error).toBeInstanceOf(InvalidTransition);
        expect((await store.repos.environments.get(env.id))?.name).toBe(env.name);
      });
    });

    describe('custom images', () => {
      const imageIn = async (status: 'active' | 'superseded' | 'revoked' | 'failed') => {
        const env = await newEnvironment();
        const image = await store.repos.templates.insert({
          environmentId: env.id,
          provider: 'fake',
          kind: 'image',
          providerRef: 'ref',
          digest: null,
          sizeBytes: null,
          status: status === 'failed' ? 'failed' : 'active',
          refreshedFromTemplateId: null,
          setupSessionId: null,
          revisionId: env.currentRevision.id,
          fingerprint: 'sha256:x',
          bootSource: { provider: 'fake', config: {} },
          metadata: {},
          failureReason: null,
        });
        if (status === 'failed') return image.id;
        for (const step of pathTo(customImageMachine, 'active', status)) {
          expect(await store.repos.templates.setStatus(image.id, step)).toMatchObject({ status: step });
        }
        return image.id;
      };

      for (const from of customImageMachine.statuses) {
        for (const to of customImageMachine.statuses) {
          const allowed = customImageMachine.can(from, to);
          it(`${allowed ? 'moves' : 'refuses with a typed 409'} ${from} → ${to}`, async () => {
            const id = await imageIn(from);
            if (allowed) {
              expect(await store.repos.templates.setStatus(id, to)).toMatchObject({ status: to });
              return;
            }
            const error = await thrown(() => store.repos.templates.setStatus(id, to));
            expect(error).toBeInstanceOf(InvalidTransition);
            expect(error).toMatchObject({ code: 'invalid_transition', details: { machine: 'custom image', from, to } });
            expect((await store.repos.templates.get(id))?.status).toBe(from);
          });
        }
      }

      it('supersedeActive touches only the active image', async () => {
        const id = await imageIn('revoked');
        const envId = (await store.repos.templates.get(id))!.environmentId;
        expect(await store.repos.templates.supersedeActive(envId, 'img_next')).toBeNull();
        expect((await store.repos.templates.get(id))?.status).toBe('revoked');
      });
    });

    describe('sandboxes', () => {
      const sandboxIn = async (status: SandboxStatus) => {
        const env = await newEnvironment();
        const sandbox = await store.repos.sandboxes.insert({
          environmentId: env.id,
          environmentRevisionId: env.currentRevision.id,
          imageId: null,
          provider: 'fake',
          createdByRole: 'admin',
          createdByKeyId: null,
        });
        for (const step of pathTo(sandboxMachine, 'starting', status)) {
          expect(await store.repos.sandboxes.update(sandbox.id, { status: step })).toMatchObject({ status: step });
        }
        return sandbox.id;
      };

      for (const from of sandboxMachine.statuses) {
        for (const to of sandboxMachine.statuses) {
          const allowed = sandboxMachine.can(from, to);
          it(`${allowed ? 'moves' : 'refuses with a typed 409'} ${from} → ${to}`, async () => {
            const id = await sandboxIn(from);
            if (allowed) {
              expect(await store.repos.sandboxes.update(id, { status: to })).toMatchObject({ status: to });
              return;
            }
            const error = await thrown(() => store.repos.sandboxes.update(id, { status: to, failureReason: 'nope' }));
            expect(error).toBeInstanceOf(InvalidTransition);
            expect(error).toMatchObject({ code: 'invalid_transition', details: { machine: 'sandbox', from, to } });
            expect(await store.repos.sandboxes.get(id)).toMatchObject({ status: from });
          });
        }
      }

      it('an update without a status is not gated', async () => {
        const id = await sandboxIn('deleted');
        expect(await store.repos.sandboxes.update(id, { desiredStatus: 'deleted' })).toMatchObject({ status: 'deleted' });
      });
    });
  });
}
