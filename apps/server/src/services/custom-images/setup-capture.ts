import type { BootSource, CustomImageTemplate, Principal, SetupSession } from '@sandcast/core';
import { newId, type Repositories, type Store } from '@sandcast/db';
import type { SandboxProvider, TemplateRef } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.ts';
import { recordActivity } from '../activity.service.ts';
import { fingerprintOf } from '../boot-source.ts';

/** How far a capture has come, as the provider reports it. */
export interface CaptureProgress {
  phase: string;
  fraction?: number | undefined;
  startedAt: string;
}

export interface CaptureInput {
  /** The session, already moved to `capturing`, with its setup sandbox's lease. */
  session: SetupSession & { providerLeaseId: string };
  provider: SandboxProvider;
  bootSource: BootSource;
  metadata: Record<string, unknown> | undefined;
  actor: Principal;
}

export interface CaptureDeps {
  store: Store;
  log: FastifyBaseLogger;
  clock: Clock;
  /** Progress of the captures this process runs, by session id. */
  progress: Map<string, CaptureProgress>;
  /**
   * The one closing step every outcome runs: releases the setup sandbox and announces the end.
   * Given the session as it ended (or as it was, when recording the end failed).
   */
  close(session: SetupSession): Promise<void>;
  /** Told after a change to what an environment boots from commits (boot-target caches drop it). */
  bootSourceChanged?: ((environmentId: string) => void) | undefined;
}

/**
 * Capture and promotion of a `capturing` setup session. The provider captures the sandbox; one
 * transaction then moves the session to `promoted`, supersedes the active image and inserts the
 * new one. Either failure leaves the active image untouched and the session `failed`, recorded
 * as activity in the same transaction as the status change. Every outcome ends in `close`.
 */
export async function captureAndPromote(
  deps: CaptureDeps,
  input: CaptureInput,
): Promise<{ session: SetupSession; template: CustomImageTemplate }> {
  const { store, progress, clock } = deps;
  const { session, provider, actor } = input;
  const startedAt = clock.now().toISOString();
  progress.set(session.id, { phase: 'capturing', startedAt });
  const provenance = {
    environmentId: session.environmentId,
    provider: session.provider,
    refreshedFromTemplateId: session.sourceTemplateId,
    setupSessionId: session.id,
    revisionId: session.environmentRevisionId,
    fingerprint: fingerprintOf(input.bootSource),
    bootSource: input.bootSource,
  };
  let ended: SetupSession = session;
  try {
    let ref: TemplateRef;
    try {
      ref = await provider.captureTemplate({
        leaseId: session.providerLeaseId,
        setupSessionId: session.id,
        environmentId: session.environmentId,
        onProgress: (p) => progress.set(session.id, { ...p, startedAt }),
      });
    } catch (error) {
      const failureReason = `capture failed: ${(error as Error).message}`;
      ended = await recordFailure(deps, input, { failureReason, stage: 'capture' }, async (repos) => {
        await repos.templates.insert({
          ...provenance,
          kind: provider.capabilities.templateRefKind ?? 'image',
          providerRef: null,
          digest: null,
          sizeBytes: null,
          status: 'failed',
          metadata: input.metadata ?? {},
          failureReason,
        });
      });
      throw error;
    }

    const templateId = newId('img');
    try {
      const promoted = await store.transaction(async (repos) => {
        const next = await repos.setupSessions.transition(session.id, 'promoted', { finished: true });
        if (!next) throw new Error(`setup session ${session.id} no longer exists`);
        const superseded = await repos.templates.supersedeActive(session.environmentId, templateId);
        const template = await repos.templates.insert({
          ...provenance,
          id: templateId,
          kind: ref.kind,
          providerRef: ref.ref,
          digest: ref.digest ?? null,
          sizeBytes: ref.sizeBytes ?? null,
          status: 'active',
          metadata: { ...ref.metadata, ...input.metadata },
          failureReason: null,
        });
        await recordActivity(repos, {
          action: 'environment.custom_image_setup.finished',
          actor,
          subjectType: 'setup_session',
          subjectId: session.id,
          details: {
            environmentId: session.environmentId,
            templateId,
            supersededTemplateId: superseded?.id ?? null,
            kind: ref.kind,
            providerRef: ref.ref,
          },
        });
        return { session: next, template };
      });
      ended = promoted.session;
      deps.bootSourceChanged?.(session.environmentId);
      return promoted;
    } catch (error) {
      deps.log.error({ err: error, sessionId: session.id }, 'promoting a captured image failed; deleting the artefact');
      const failureReason = `the captured image could not be promoted: ${(error as Error).message}`;
      ended = await recordFailure(deps, input, { failureReason, stage: 'promotion', providerRef: ref.ref });
      if (provider.capabilities.templateDelete) {
        await provider
          .deleteTemplate(ref)
          .catch((err: unknown) => deps.log.warn({ err, ref: ref.ref }, 'deleting an unpromoted capture failed; remove it by hand'));
      }
      throw error;
    }
  } finally {
    progress.delete(session.id);
    await deps.close(ended);
  }
}

/**
 * Moves the session `capturing → failed` and records why, in one transaction (with whatever else
 * `also` writes). Returns the failed session; if even that cannot be recorded (the session
 * changed, the database is gone) it is logged and the session is returned as it was.
 */
async function recordFailure(
  deps: CaptureDeps,
  input: CaptureInput,
  failure: { failureReason: string; stage: 'capture' | 'promotion'; providerRef?: string },
  also?: (repos: Repositories) => Promise<void>,
): Promise<SetupSession> {
  const { session, actor } = input;
  try {
    const failed = await deps.store.transaction(async (repos) => {
      const next = await repos.setupSessions.transition(session.id, 'failed', { finished: true, failureReason: failure.failureReason });
      await also?.(repos);
      await recordActivity(repos, {
        action: 'environment.custom_image_setup.failed',
        actor,
        subjectType: 'setup_session',
        subjectId: session.id,
        details: {
          environmentId: session.environmentId,
          stage: failure.stage,
          failureReason: failure.failureReason,
          ...(failure.providerRef ? { providerRef: failure.providerRef } : {}),
        },
      });
      return next;
    });
    return failed ?? session;
  } catch (error) {
    deps.log.error({ err: error, sessionId: session.id }, `recording the failed ${failure.stage} failed`);
    return session;
  }
}
