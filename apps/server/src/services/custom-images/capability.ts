import type { CustomImageCapability } from '@sandcast/contracts';
import type { ProviderCapabilities } from '@sandcast/provider-sdk';

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
