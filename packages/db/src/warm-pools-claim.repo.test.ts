import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { Db } from './connect.ts';
import { createRepositories } from './store.ts';
import { useEnvironmentFixture } from './testing/fixtures.ts';
import { testDatabases } from './testing/test-databases.ts';

/** The claim of a warm-pool member in one statement: the compare-and-set, its activity row, the image's touch (ADR 0035). */
for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`warmPools.claim [${database.kind}]`, () => {
    const fx = useEnvironmentFixture(database, 'claim-one-statement');
    const owner = { createdByRole: 'agent', createdByKeyId: 'key-a', sessionId: null, bindingName: null };
    const activity = {
      action: 'sandbox.created',
      actor: { role: 'agent', keyId: 'key-a' },
      subjectType: 'sandbox',
      details: { source: 'warm_pool', nested: { list: [1, 'two'] } },
    };

    const image = async () =>
      fx.repos().templates.insert({
        environmentId: fx.environmentId(),
        provider: 'fake',
        kind: 'image',
        providerRef: 'ref',
        digest: null,
        sizeBytes: null,
        status: 'active',
        refreshedFromTemplateId: null,
        setupSessionId: null,
        revisionId: fx.revisionId(),
        fingerprint: 'sha256:x',
        bootSource: { provider: 'fake', config: {} },
        metadata: {},
        failureReason: null,
      });
    const member = async (imageId: string | null) => {
      const row = await fx.repos().sandboxes.insert({
        environmentId: fx.environmentId(),
        environmentRevisionId: fx.revisionId(),
        imageId,
        provider: 'fake',
        createdByRole: 'admin',
        createdByKeyId: null,
        pooled: true,
      });
      await fx.repos().sandboxes.update(row.id, { providerInstanceId: `i-${row.id}`, status: 'running' });
      return row.id;
    };
    const statements = async <T>(call: () => Promise<T>): Promise<{ value: T; sent: string[] }> => {
      const sent: string[] = [];
      const stop = fx.raw().onQuery((sql) => sent.push(sql));
      try {
        return { value: await call(), sent };
      } finally {
        stop();
      }
    };
    const createdRows = async (subjectId: string) =>
      (await fx.repos().activity.list({ limit: 500, action: 'sandbox.created' })).filter((a) => a.subjectId === subjectId);

    it('takes the member, writes its activity row and touches the image, all in one statement', async () => {
      const img = await image();
      const id = await member(img.id);
      const claim = {
        environmentId: fx.environmentId(),
        revisionId: fx.revisionId(),
        imageId: img.id,
        active: { id: img.id, linkedFingerprint: img.linkedFingerprint },
        owner,
        at: new Date(Date.UTC(2031, 0, 1)),
        activity,
        touchImage: true,
      };
      const { value: claimed, sent } = await statements(() => fx.repos().warmPools.claim(claim));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^with "claimed" as \(update "sandboxes"/);
      expect(claimed).toMatchObject({ id, pooled: false, source: 'warm_pool', createdByKeyId: 'key-a', imageId: img.id });
      expect(claimed!.lastActivityAt).toBe(claim.at.toISOString());
      const [row, ...more] = await createdRows(id);
      expect(more).toEqual([]);
      expect(row).toMatchObject({ ...activity, subjectId: id });
      expect((await fx.repos().templates.get(img.id))!.lastUsedAt).not.toBeNull();

      // Nothing left to claim: nothing written, nothing touched again.
      const usedAt = (await fx.repos().templates.get(img.id))!.lastUsedAt;
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await fx.repos().warmPools.claim(claim)).toBeNull();
      expect((await fx.repos().templates.get(img.id))!.lastUsedAt).toBe(usedAt);
      await fx.repos().templates.setStatus(img.id, 'revoked');
    });

    it('a claim refused by the currency check writes no activity row and touches nothing', async () => {
      const img = await image();
      const id = await member(img.id);
      const base = {
        environmentId: fx.environmentId(),
        revisionId: fx.revisionId(),
        imageId: img.id,
        owner,
        at: new Date(),
        activity,
        touchImage: true,
      };
      // The active image as the caller saw it, but with another linked fingerprint (a relink since).
      expect(await fx.repos().warmPools.claim({ ...base, active: { id: img.id, linkedFingerprint: 'sha256:other' } })).toBeNull();
      // Another revision than the environment's current one.
      expect(
        await fx
          .repos()
          .warmPools.claim({ ...base, revisionId: 'rev_gone', active: { id: img.id, linkedFingerprint: img.linkedFingerprint } }),
      ).toBeNull();
      expect(await createdRows(id)).toEqual([]);
      expect((await fx.repos().templates.get(img.id))!.lastUsedAt).toBeNull();
      expect((await fx.repos().sandboxes.get(id))!.pooled).toBe(true);
      await fx.repos().templates.setStatus(img.id, 'revoked');
    });

    it('without activity or an image it is the bare compare-and-set', async () => {
      const id = await member(null);
      const { value, sent } = await statements(() =>
        fx.repos().warmPools.claim({
          environmentId: fx.environmentId(),
          revisionId: fx.revisionId(),
          imageId: null,
          active: null,
          owner,
          at: new Date(),
          touchImage: true,
        }),
      );
      expect(value?.id).toBe(id);
      expect(sent).toHaveLength(1);
      expect(sent[0]).not.toMatch(/"activity"|"environment_custom_image_templates" set/);
      expect(await createdRows(id)).toEqual([]);
    });

    it('racing claims that each touch the image take different members and none fails (no lock-upgrade deadlock)', async () => {
      const img = await image();
      const ids = new Set<string>();
      for (let i = 0; i < 6; i++) ids.add(await member(img.id));
      const claim = () =>
        fx.repos().warmPools.claim({
          environmentId: fx.environmentId(),
          revisionId: fx.revisionId(),
          imageId: img.id,
          active: { id: img.id, linkedFingerprint: img.linkedFingerprint },
          owner,
          at: new Date(),
          activity,
          touchImage: true,
        });
      const claimed = await Promise.all(Array.from({ length: 8 }, claim));
      const taken = claimed.flatMap((c) => (c ? [c.id] : []));
      expect(taken).toHaveLength(6);
      expect(new Set(taken)).toEqual(ids);
      for (const id of taken) expect(await createdRows(id)).toHaveLength(1);
      await fx.repos().templates.setStatus(img.id, 'revoked');
    });

    // Two claims that both held the image row FOR SHARE and then both updated it (the touch) would
    // deadlock. One claim is held at that point here (a transaction holding the share lock, as a
    // claim between its check and its touch does) while the other runs; then the held one finishes.
    it.skipIf(database.kind !== 'postgres')(
      'a claim that meets another between its check and its touch waits instead of deadlocking',
      async () => {
        const img = await image();
        await member(img.id);
        await member(img.id);
        const claim = {
          environmentId: fx.environmentId(),
          revisionId: fx.revisionId(),
          imageId: img.id,
          active: { id: img.id, linkedFingerprint: img.linkedFingerprint },
          owner,
          at: new Date(),
          activity,
          touchImage: true,
        };
        let other: Promise<unknown> = Promise.resolve();
        const held = await fx.raw().db.transaction(async (tx) => {
          await tx.execute(sql`SELECT 1 FROM environment_custom_image_templates WHERE id = ${img.id} FOR SHARE`);
          other = fx
            .repos()
            .warmPools.claim(claim)
            .then(
              (value) => value,
              (error: unknown) => error,
            );
          await new Promise((resolve) => setTimeout(resolve, 300));
          return createRepositories(tx as unknown as Db).warmPools.claim(claim);
        });
        const second = await other;
        expect(held).toMatchObject({ pooled: false });
        expect(second).toMatchObject({ pooled: false });
        await fx.repos().templates.setStatus(img.id, 'revoked');
      },
    );
  });
}
