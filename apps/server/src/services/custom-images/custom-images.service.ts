import type { CustomImageOverview } from '@sandcast/contracts';
import { bootSourceDrift, type CustomImageTemplate, isActiveSetupSession, type Principal, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import { recordActivity } from '../activity.service.ts';
import type { EnvironmentContext, EnvironmentContextLoader } from '../environment-context.ts';
import { capabilityOf, presentSession, presentTemplate, templateRefOf } from './present.ts';
import type { SetupSessionsService } from './setup-sessions.service.ts';

export type CustomImagesService = ReturnType<typeof createCustomImagesService>;

export type Reconciliation = { action: 'none' | 'relinked' | 'detached'; templateId?: string; driftedPaths?: string[] };

/** Whether runs of this environment boot from the image: it must be linked to today's boot source. */
export function imageMatches(template: CustomImageTemplate, ctx: EnvironmentContext): boolean {
  return template.linkedFingerprint === ctx.fingerprint;
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
}) {
  const { store } = deps;

  const noActive = () =>
    new SandcastError('not_found', 'this environment has no active custom image; runs already use the base provider configuration');

  return {
    async overview(environmentId: string): Promise<CustomImageOverview> {
      const ctx = await deps.loadEnvironment(environmentId);
      const active = await store.repos.templates.active(environmentId);
      const latest = await store.repos.setupSessions.latestForEnvironment(environmentId);
      const latestSession = latest ? await deps.setupSessions.refresh(latest) : null;
      const matches = active ? imageMatches(active, ctx) : null;
      return {
        activeTemplate: active ? presentTemplate(active) : null,
        activeTemplateMatchesConfig: matches,
        activeTemplateDrift: active && !matches ? { paths: bootSourceDrift(active.linkedBootSource, ctx.bootSource) } : null,
        activeSession: latestSession && isActiveSetupSession(latestSession.status) ? presentSession(latestSession) : null,
        latestSession: latestSession ? presentSession(latestSession) : null,
        capability: capabilityOf(ctx.registered.provider.capabilities),
      };
    },

    async history(environmentId: string) {
      await deps.loadEnvironment(environmentId);
      return (await store.repos.templates.list(environmentId)).map(presentTemplate);
    },

    async rollback(environmentId: string, actor: Principal) {
      await deps.loadEnvironment(environmentId);
      return store.transaction(async (repos) => {
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
        return { activeTemplate: presentTemplate(restored), supersededTemplate: presentTemplate(demoted) };
      });
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
      return { template: presentTemplate(revoked), providerTemplateDeleted, ...(providerTemplateNote ? { providerTemplateNote } : {}) };
    },

    async relink(environmentId: string, options: { confirmBootSourceDrift: boolean }, actor: Principal) {
      const ctx = await deps.loadEnvironment(environmentId);
      const active = await store.repos.templates.active(environmentId);
      if (!active) throw noActive();
      if (imageMatches(active, ctx) && active.linkedRevisionId === ctx.environment.currentRevision.id) {
        return { template: presentTemplate(active), classification: 'in_sync' as const };
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
      return store.transaction(async (repos) => {
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
        return { template: presentTemplate(relinked), classification };
      });
    },

    /**
     * After an environment edit: a change that leaves the boot source alone (a runtime knob, a
     * secret) keeps the image in use, linked to the new revision; any other change detaches it.
     */
    async reconcileAfterEdit(environmentId: string, actor: Principal): Promise<Reconciliation> {
      const active = await store.repos.templates.active(environmentId);
      if (!active) return { action: 'none' };
      const ctx = await deps.loadEnvironment(environmentId);
      if (!imageMatches(active, ctx)) {
        const driftedPaths = bootSourceDrift(active.linkedBootSource, ctx.bootSource);
        await recordActivity(store.repos, {
          action: 'environment.custom_image_template.detached',
          actor,
          subjectType: 'custom_image_template',
          subjectId: active.id,
          details: { environmentId, driftedPaths, revision: ctx.environment.currentRevision.number },
        });
        return { action: 'detached', templateId: active.id, driftedPaths };
      }
      if (active.linkedRevisionId === ctx.environment.currentRevision.id) return { action: 'none', templateId: active.id };
      await store.transaction(async (repos) => {
        await repos.templates.relink(active.id, {
          revisionId: ctx.environment.currentRevision.id,
          fingerprint: ctx.fingerprint,
          bootSource: ctx.bootSource,
        });
        await recordActivity(repos, {
          action: 'environment.custom_image_template.relinked',
          actor,
          subjectType: 'custom_image_template',
          subjectId: active.id,
          details: { environmentId, classification: 'runtime_only', automatic: true, revision: ctx.environment.currentRevision.number },
        });
      });
      return { action: 'relinked', templateId: active.id };
    },
  };
}
