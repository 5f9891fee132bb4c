import {
  bootSourceDrift,
  type CustomImageTemplate,
  isActiveSetupSession,
  type Principal,
  SandcastError,
  type SetupSession,
} from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import { recordActivity } from '../activity.service.ts';
import type { EnvironmentContext, EnvironmentContextLoader } from '../environment-context.ts';
import { imageMatches } from './image-link.ts';
import type { SetupSessionsService } from './setup-sessions.service.ts';
import { templateRefOf } from './template-ref.ts';

export type CustomImagesService = ReturnType<typeof createCustomImagesService>;

/** What the custom image panel shows: the environment now, its active image and its latest setup. */
export interface ImagesOverview {
  context: EnvironmentContext;
  active: CustomImageTemplate | null;
  /** The latest session while it still holds the setup slot. */
  activeSession: SetupSession | null;
  latestSession: SetupSession | null;
}

/**
 * The environment's images: what is active, Rollback, Disable, Relink, and keeping the active
 * image linked (or detached) as the environment's config changes.
 */
export function createCustomImagesService(deps: {
  store: Store;
  loadEnvironment: EnvironmentContextLoader;
  setupSessions: SetupSessionsService;
  log: FastifyBaseLogger;
  /** Told after a change to what an environment boots from commits (boot-target caches drop it). */
  bootSourceChanged?: ((environmentId: string) => void) | undefined;
}) {
  const { store } = deps;

  const noActive = () =>
    new SandcastError('not_found', 'this environment has no active custom image; runs already use the base provider configuration');

  return {
    async overview(environmentId: string): Promise<ImagesOverview> {
      const context = await deps.loadEnvironment(environmentId);
      const active = await store.repos.templates.active(environmentId);
      const latest = await store.repos.setupSessions.latestForEnvironment(environmentId);
      const latestSession = latest ? await deps.setupSessions.refresh(latest) : null;
      const activeSession = latestSession && isActiveSetupSession(latestSession.status) ? latestSession : null;
      return { context, active, activeSession, latestSession };
    },

    async history(environmentId: string): Promise<CustomImageTemplate[]> {
      await deps.loadEnvironment(environmentId);
      return store.repos.templates.list(environmentId);
    },

    async rollback(environmentId: string, actor: Principal) {
      await deps.loadEnvironment(environmentId);
      const rolledBack = await store.transaction(async (repos) => {
        const active = await repos.templates.active(environmentId);
        if (!active) throw noActive();
        const previous = await repos.templates.supersededBy(active.id);
        if (!previous)
          throw new SandcastError('not_found', 'the active image did not replace an earlier one, so there is nothing to roll back to');
        const demoted = await repos.templates.setStatus(active.id, 'superseded', { supersededByTemplateId: previous.id });
        const restored = demoted && (await repos.templates.setStatus(previous.id, 'active', { supersededByTemplateId: null }));
        if (!demoted || !restored)
          throw new SandcastError('conflict', 'the active image changed during the rollback; reload and try again');
        await recordActivity(repos, {
          action: 'environment.custom_image_template.rolled_back',
          actor,
          subjectType: 'custom_image_template',
          subjectId: restored.id,
          details: { environmentId, supersededTemplateId: demoted.id },
        });
        return { activeTemplate: restored, supersededTemplate: demoted };
      });
      deps.bootSourceChanged?.(environmentId);
      return rolledBack;
    },

    async disable(environmentId: string, options: { deleteProviderTemplate: boolean }, actor: Principal) {
      const ctx = await deps.loadEnvironment(environmentId);
      const revoked = await store.transaction(async (repos) => {
        const active = await repos.templates.active(environmentId);
        if (!active) throw noActive();
        const next = await repos.templates.setStatus(active.id, 'revoked');
        if (!next) throw new SandcastError('conflict', 'the active image changed while disabling it; reload and try again');
        await recordActivity(repos, {
          action: 'environment.custom_image_template.disabled',
          actor,
          subjectType: 'custom_image_template',
          subjectId: next.id,
          details: { environmentId, deleteProviderTemplate: options.deleteProviderTemplate },
        });
        return next;
      });
      deps.bootSourceChanged?.(environmentId);
      let providerTemplateDeleted = false;
      let providerTemplateNote: string | undefined;
      if (options.deleteProviderTemplate) {
        const provider = ctx.registered.provider;
        const others = revoked.providerRef
          ? await store.repos.templates.countReferencing(revoked.provider, revoked.providerRef, revoked.id)
          : 0;
        if (!provider.capabilities.templateDelete)
          providerTemplateNote = `the ${provider.id} provider cannot delete its images; remove ${revoked.providerRef} by hand`;
        else if (revoked.provider !== provider.id)
          providerTemplateNote = `the image belongs to the ${revoked.provider} provider, which this environment no longer uses; it was kept`;
        else if (others > 0) providerTemplateNote = `kept: ${others} other image(s) of this environment still use ${revoked.providerRef}`;
        else {
          try {
            await provider.deleteTemplate(templateRefOf(revoked));
            providerTemplateDeleted = true;
          } catch (error) {
            providerTemplateNote = `the image was disabled, but the provider kept its artefact: ${(error as Error).message}`;
          }
        }
      }
      return { template: revoked, providerTemplateDeleted, ...(providerTemplateNote ? { providerTemplateNote } : {}) };
    },

    async relink(environmentId: string, options: { confirmBootSourceDrift: boolean }, actor: Principal) {
      const ctx = await deps.loadEnvironment(environmentId);
      const active = await store.repos.templates.active(environmentId);
      if (!active) throw noActive();
      if (imageMatches(active, ctx) && active.linkedRevisionId === ctx.environment.currentRevision.id) {
        return { template: active, classification: 'in_sync' as const };
      }
      const classification = imageMatches(active, ctx) ? ('runtime_only' as const) : ('boot_source_drift' as const);
      const driftedPaths = bootSourceDrift(active.linkedBootSource, ctx.bootSource);
      if (classification === 'boot_source_drift' && !options.confirmBootSourceDrift) {
        throw new SandcastError(
          'unprocessable',
          `the boot source changed since this image was linked (${driftedPaths.join(', ')}), so runs would boot an image built for another configuration. ` +
            'Send confirmBootSourceDrift: true to relink anyway, or capture a new image.',
          { classification, driftedPaths },
        );
      }
      const result = await store.transaction(async (repos) => {
        const relinked = await repos.templates.relink(active.id, {
          revisionId: ctx.environment.currentRevision.id,
          fingerprint: ctx.fingerprint,
          bootSource: ctx.bootSource,
        });
        if (!relinked) throw new SandcastError('conflict', 'the active image changed while relinking; reload and try again');
        await recordActivity(repos, {
          action: 'environment.custom_image_template.relinked',
          actor,
          subjectType: 'custom_image_template',
          subjectId: relinked.id,
          details: { environmentId, classification, driftedPaths, revision: ctx.environment.currentRevision.number },
        });
        return { template: relinked, classification };
      });
      deps.bootSourceChanged?.(environmentId);
      return result;
    },
  };
}
