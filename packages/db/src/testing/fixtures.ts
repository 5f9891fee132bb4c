import type { Environment, SetupSession } from '@sandcast/core';
import type { Store } from '../store.ts';

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
