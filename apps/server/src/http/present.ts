import type {
  CustomImageOverview,
  CustomImageTemplateBody,
  EnvironmentBody,
  EnvironmentRevisionBody,
  SandboxBody,
  SetupSessionBody,
} from '@sandcast/contracts';
import {
  bootSourceDrift,
  type CustomImageTemplate,
  type Environment,
  type EnvironmentRevision,
  type Sandbox,
  SETUP_SESSION_LABELS,
  type SetupSession,
} from '@sandcast/core';
import { maskConfig } from '../services/config-secrets.ts';
import { capabilityOf } from '../services/custom-images/capability.ts';
import type { ImagesOverview } from '../services/custom-images/custom-images.service.ts';

/**
 * The one layer that turns domain records into API answers (decision 0012): services return
 * records, routes answer with these. Secrets are masked here, internal fields are dropped here.
 */

export function presentEnvironment(environment: Environment): EnvironmentBody {
  return { ...environment, config: maskConfig(environment.config), connectionId: environment.connectionId ?? null };
}

export function presentRevision(revision: EnvironmentRevision): EnvironmentRevisionBody {
  return { ...revision, config: maskConfig(revision.config) };
}

export function presentSession(session: SetupSession): SetupSessionBody {
  return { ...session, statusLabel: SETUP_SESSION_LABELS[session.status] };
}

export function presentTemplate(template: CustomImageTemplate): CustomImageTemplateBody {
  const { linkedBootSource: _omitted, ...rest } = template;
  return rest;
}

export function presentSandbox(sandbox: Sandbox): SandboxBody {
  const {
    providerInstanceId: _instance,
    createdByKeyId: _key,
    createdByRole: _role,
    bindingName: _binding,
    spec,
    configOverrides: _overrides,
    ...rest
  } = sandbox;
  return { ...rest, durability: spec.durability };
}

export function presentOverview(overview: ImagesOverview): CustomImageOverview {
  const { active, context, latestSession } = overview;
  const matches = active ? active.linkedFingerprint === context.fingerprint : null;
  return {
    activeTemplate: active ? presentTemplate(active) : null,
    activeTemplateMatchesConfig: matches,
    activeTemplateDrift: active && !matches ? { paths: bootSourceDrift(active.linkedBootSource, context.bootSource) } : null,
    activeSession: overview.activeSession ? presentSession(overview.activeSession) : null,
    latestSession: latestSession ? presentSession(latestSession) : null,
    capability: capabilityOf(context.registered.provider.capabilities),
  };
}
