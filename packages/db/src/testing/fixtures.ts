import type { Environment, SetupSession } from '@sandcast/core';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../connect.ts';
import { createRepositories, type Repositories, type Store } from '../store.ts';
import type { TestDatabase } from './test-databases.ts';

/** A `starting` setup session of `environment` (fake provider, no source image) that expires in `expiresInMs`. */
export function insertSetupSession(store: Store, environment: Environment, expiresInMs = 3_600_000): Promise<SetupSession> {
  return store.repos.setupSessions.insert({
    environmentId: environment.id,
    environmentRevisionId: environment.currentRevision.id,
    provider: 'fake',
    sourceTemplateId: null,
    expiresAt: new Date(Date.now() + expiresInMs),
    createdByKeyId: null,
  });
}

/**
 * One database per describe block with an environment (fake provider) to hang sandboxes on:
 * registers the open/close hooks; the getters are valid inside tests.
 */
export function useEnvironmentFixture(database: TestDatabase, environmentName: string) {
  let raw: Database | undefined;
  let repos: Repositories | undefined;
  let environment: Environment | undefined;
  beforeAll(async () => {
    raw = await database.openDatabase();
    repos = createRepositories(raw.db);
    environment = await repos.environments.insert({ name: environmentName, provider: 'fake', config: {} });
  });
  afterAll(async () => {
    await raw?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the database fixture is used outside a test');
    return value;
  };
  return {
    raw: () => ready(raw),
    repos: () => ready(repos),
    environmentId: () => ready(environment).id,
    revisionId: () => ready(environment).currentRevision.id,
    /** A sandbox row of the environment's current revision, created by an admin. */
    newSandbox: () =>
      ready(repos).sandboxes.insert({
        environmentId: ready(environment).id,
        environmentRevisionId: ready(environment).currentRevision.id,
        imageId: null,
        provider: 'fake',
        createdByRole: 'admin',
        createdByKeyId: null,
      }),
  };
}
