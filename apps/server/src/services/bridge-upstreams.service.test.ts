import { randomBytes } from 'node:crypto';
import type { Principal } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridgeUpstreamsService } from './bridge-upstreams.service.ts';
import { createSecretBox } from './secrets.ts';

const admin: Principal = { role: 'admin', keyId: null };

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`bridge upstream credentials [${database.kind}]`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await database.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('opens a credential for the forwarder only; one sealed with another key is skipped, never thrown', async () => {
      const sealing = createBridgeUpstreamsService({ store, secrets: createSecretBox(randomBytes(32)) });
      await sealing.put('llm', { baseUrl: 'http://127.0.0.1:9/v1', allowedPaths: ['/v1/*'], credential: 'sk-test-123' }, admin);
      expect(await sealing.resolved()).toEqual([
        { name: 'llm', baseUrl: 'http://127.0.0.1:9/v1', allowedPaths: ['/v1/*'], credential: 'sk-test-123' },
      ]);
      const warnings: unknown[] = [];
      const otherKey = createBridgeUpstreamsService({
        store,
        secrets: createSecretBox(randomBytes(32)),
        log: { warn: (fields: unknown) => warnings.push(fields) } as never,
      });
      expect(await otherKey.resolved()).toEqual([]);
      expect(warnings).toEqual([{ upstream: 'llm' }]);
    });
  });
}
