import { beforeAll, describe, expect, it } from 'vitest';
import type { NewCheckpoint } from './repos/checkpoints.repo.ts';
import type { Repositories } from './store.ts';
import { useEnvironmentFixture } from './testing/fixtures.ts';
import { testDatabases } from './testing/test-databases.ts';

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`checkpoints and blob reference counts [${database.kind}]`, () => {
    const fixture = useEnvironmentFixture(database, 'ckpt');
    let repos: Repositories;
    beforeAll(() => {
      repos = fixture.repos();
    });
    const newSandbox = fixture.newSandbox;

    const checkpointOf = (sandboxId: string, generation: number, digests: string[]): NewCheckpoint => ({
      sandboxId,
      generation,
      manifestDigest: digests[0]!,
      storedBytes: 10,
      totalBytes: 100,
      fileCount: 2,
      changedPaths: 1,
      trigger: 'auto',
      digests,
    });

    const record = async (input: NewCheckpoint) => {
      const outcome = await repos.checkpoints.record(input);
      if (outcome.kind !== 'recorded') throw new Error(`claimed: ${outcome.digests.join(',')}`);
      return outcome;
    };

    it('records unattached, counts one reference per checkpoint and digest, reports first references as unverified', async () => {
      const sandbox = await newSandbox();
      const first = await record(checkpointOf(sandbox.id, 1, ['m1', 'a', 'b', 'b']));
      expect(first.checkpoint).toMatchObject({ generation: 1, attachedAt: null, trigger: 'auto' });
      expect(first.checkpoint.id).toMatch(/^ckp_[0-9a-f]{32}$/);
      expect(first.unverified.sort()).toEqual(['a', 'b', 'm1']);
      const second = await record(checkpointOf(sandbox.id, 1, ['m2', 'a', 'c']));
      expect(second.unverified.sort()).toEqual(['c', 'm2']);
      expect(await repos.checkpoints.refsOf('a')).toBe(2);
      expect(await repos.checkpoints.refsOf('b')).toBe(1);
    });

    it('attaches only while the sandbox is at the generation that took it', async () => {
      const sandbox = await newSandbox();
      const taken = await record(checkpointOf(sandbox.id, 1, ['g-m1']));
      const attached = await repos.checkpoints.attach(taken.checkpoint.id);
      expect(attached?.attachedAt).not.toBeNull();
      expect((await repos.sandboxes.get(sandbox.id))?.currentCheckpointId).toBe(taken.checkpoint.id);

      // The compute is replaced (generation 2) while generation 1 is still capturing.
      const late = await record(checkpointOf(sandbox.id, 1, ['g-m2']));
      await repos.sandboxes.update(sandbox.id, { status: 'running' });
      await repos.sandboxes.update(sandbox.id, { status: 'lost' });
      expect(await repos.sandboxes.bumpGeneration(sandbox.id, 1)).not.toBeNull();
      expect(await repos.checkpoints.attach(late.checkpoint.id)).toBeNull();
      expect((await repos.checkpoints.get(late.checkpoint.id))?.attachedAt).toBeNull();
      expect((await repos.sandboxes.get(sandbox.id))?.currentCheckpointId).toBe(taken.checkpoint.id);
      // Retention lets the fenced-out one go at once.
      expect(await repos.checkpoints.prunable(sandbox.id, 20, new Date(0))).toEqual([late.checkpoint.id]);
    });

    it('keeps the newest N attached (and the current one), releases the rest, and hands each unreferenced blob to one collector', async () => {
      const sandbox = await newSandbox();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const taken = await record(checkpointOf(sandbox.id, 1, [`r-m${i}`, 'r-shared', `r-own${i}`]));
        await repos.checkpoints.attach(taken.checkpoint.id);
        ids.push(taken.checkpoint.id);
      }
      expect((await repos.checkpoints.listAttached(sandbox.id)).map((c) => c.id)).toEqual([...ids].reverse());
      const prunable = await repos.checkpoints.prunable(sandbox.id, 2, new Date(0));
      expect(prunable.sort()).toEqual(ids.slice(0, 3).sort());

      // Two collectors release at once: every reference is dropped exactly once.
      await Promise.all([repos.checkpoints.release(prunable), repos.checkpoints.release(prunable)]);
      expect(await repos.checkpoints.refsOf('r-shared')).toBe(2);
      expect(await repos.checkpoints.refsOf('r-own0')).toBe(0);

      const claims = await Promise.all([repos.checkpoints.claimUnreferenced(), repos.checkpoints.claimUnreferenced()]);
      const own = ['r-m0', 'r-m1', 'r-m2', 'r-own0', 'r-own1', 'r-own2'];
      const claimed = claims.flat().filter((d) => d.startsWith('r-'));
      expect(claimed.sort()).toEqual(own);
      expect(new Set(claims.flat()).size).toBe(claims.flat().length);

      // A checkpoint recorded while a blob is claimed writes nothing and says which.
      const blocked = await repos.checkpoints.record(checkpointOf(sandbox.id, 1, ['r-m9', 'r-own0']));
      expect(blocked).toEqual({ kind: 'claimed', digests: ['r-own0'] });
      expect(await repos.checkpoints.refsOf('r-m9')).toBeNull();
      expect(await repos.checkpoints.claimed(['r-own0', 'r-shared'])).toEqual(['r-own0']);

      await repos.checkpoints.forget(claimed);
      expect(await repos.checkpoints.refsOf('r-own0')).toBeNull();
      const again = await record(checkpointOf(sandbox.id, 1, ['r-m9', 'r-own0']));
      expect(again.unverified.sort()).toEqual(['r-m9', 'r-own0']);
    });

    it('counts concurrent first references of one blob on one row', async () => {
      const sandbox = await newSandbox();
      await Promise.all(Array.from({ length: 6 }, (_, i) => record(checkpointOf(sandbox.id, 1, [`c-m${i}`, 'c-same']))));
      expect(await repos.checkpoints.refsOf('c-same')).toBe(6);
    });

    it('restores a checkpoint as current only at the generation the restore ran at', async () => {
      const sandbox = await newSandbox();
      const taken = await record(checkpointOf(sandbox.id, 1, ['mc-1']));
      await repos.checkpoints.attach(taken.checkpoint.id);
      const later = await record(checkpointOf(sandbox.id, 1, ['mc-2']));
      await repos.checkpoints.attach(later.checkpoint.id);
      expect(await repos.checkpoints.makeCurrent(taken.checkpoint.id, sandbox.id, 2)).toBe(false);
      expect(await repos.checkpoints.makeCurrent(taken.checkpoint.id, sandbox.id, 1)).toBe(true);
      expect((await repos.sandboxes.get(sandbox.id))?.currentCheckpointId).toBe(taken.checkpoint.id);
    });
  });
}
