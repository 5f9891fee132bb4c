import type { CustomImageCapability, CustomImageTemplateBody, SetupSessionBody } from '@sandcast/contracts';
import { type CustomImageTemplate, SETUP_SESSION_LABELS, type SetupSession } from '@sandcast/core';
import type { ProviderCapabilities, TemplateRef } from '@sandcast/provider-sdk';

export function presentSession(session: SetupSession): SetupSessionBody {
  return { ...session, statusLabel: SETUP_SESSION_LABELS[session.status] };
}

export function presentTemplate(template: CustomImageTemplate): CustomImageTemplateBody {
  const { linkedBootSource: _omitted, ...rest } = template;
  return rest;
}

export function templateRefOf(template: CustomImageTemplate): TemplateRef {
  if (!template.providerRef) throw new Error(`custom image ${template.id} has no provider reference`);
  return {
    kind: template.kind,
    ref: template.providerRef,
    digest: template.digest ?? undefined,
    sizeBytes: template.sizeBytes ?? undefined,
  };
}

export const UNSUPPORTED_SETUP_MESSAGE = 'This provider does not advertise interactive template setup.';
export const CAPTURE_UNAVAILABLE_MESSAGE = 'This provider advertises setup, but image capture is unavailable.';

/** What the custom image panel can offer for a provider, in the operator's words. */
export function capabilityOf(capabilities: ProviderCapabilities): CustomImageCapability {
  const common = {
    interactiveSetup: capabilities.interactiveSetup,
    templateCapture: capabilities.templateCapture,
    connectionTypes: capabilities.interactiveSetupConnectionTypes,
    templateRefKind: capabilities.templateRefKind,
    changeTracking: capabilities.changeTracking,
  };
  if (!capabilities.interactiveSetup)
    return { state: 'unsupported_provider', label: 'Unsupported provider', message: UNSUPPORTED_SETUP_MESSAGE, ...common };
  if (!capabilities.templateCapture)
    return { state: 'capture_unavailable', label: 'Setup capture unavailable', message: CAPTURE_UNAVAILABLE_MESSAGE, ...common };
  return { state: 'template_setup', label: 'Template setup', message: null, ...common };
}
