import { type BootSource, bootSourceDrift, type CustomImageTemplate, type Principal } from '@sandcast/core';
import type { Repositories } from '@sandcast/db';
import { recordActivity } from '../activity.service.ts';

/** What an environment edit did to its active image. */
export type Reconciliation = { action: 'none' | 'relinked' | 'detached'; templateId?: string; driftedPaths?: string[] };

/** Whether runs boot from the image: it must be linked to the environment's boot source of today. */
export function imageMatches(template: CustomImageTemplate, current: { fingerprint: string }): boolean {
  return template.linkedFingerprint === current.fingerprint;
}

/**
 * After an environment edit, in the edit's transaction: a change that leaves the boot source
 * alone (a runtime knob, a secret) keeps the image in use, linked to the new revision; any other
 * change detaches it until an operator relinks or captures again.
 */
export async function reconcileImageLink(
  repos: Repositories,
  input: {
    environmentId: string;
    revision: { id: string; number: number };
    bootSource: BootSource;
    fingerprint: string;
    actor: Principal;
  },
): Promise<Reconciliation> {
  const { environmentId, revision, actor } = input;
  const active = await repos.templates.active(environmentId);
  if (!active) return { action: 'none' };
  if (!imageMatches(active, input)) {
    const driftedPaths = bootSourceDrift(active.linkedBootSource, input.bootSource);
    await recordActivity(repos, {
      action: 'environment.custom_image_template.detached',
      actor,
      subjectType: 'custom_image_template',
      subjectId: active.id,
      details: { environmentId, driftedPaths, revision: revision.number },
    });
    return { action: 'detached', templateId: active.id, driftedPaths };
  }
  if (active.linkedRevisionId === revision.id) return { action: 'none', templateId: active.id };
  await repos.templates.relink(active.id, { revisionId: revision.id, fingerprint: input.fingerprint, bootSource: input.bootSource });
  await recordActivity(repos, {
    action: 'environment.custom_image_template.relinked',
    actor,
    subjectType: 'custom_image_template',
    subjectId: active.id,
    details: { environmentId, classification: 'runtime_only', automatic: true, revision: revision.number },
  });
  return { action: 'relinked', templateId: active.id };
}
