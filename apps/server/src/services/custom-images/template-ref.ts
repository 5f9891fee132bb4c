import type { CustomImageTemplate } from '@sandcast/core';
import type { TemplateRef } from '@sandcast/provider-sdk';

/** The provider's handle on an image's artefact. */
export function templateRefOf(template: CustomImageTemplate): TemplateRef {
  if (!template.providerRef) throw new Error(`custom image ${template.id} has no provider reference`);
  return {
    kind: template.kind,
    ref: template.providerRef,
    digest: template.digest ?? undefined,
    sizeBytes: template.sizeBytes ?? undefined,
  };
}
