import { InvalidTransition } from './setup-session.machine.ts';

/**
 * Custom image lifecycle. One image per environment is `active` (a database invariant).
 *
 *   active ◄──► superseded      (a newer capture supersedes; Rollback swaps back)
 *   active ───► revoked         (Disable)
 *   failed                      (a capture that did not complete; terminal)
 */
export const CUSTOM_IMAGE_STATUSES = ['active', 'superseded', 'revoked', 'failed'] as const;
export type CustomImageStatus = (typeof CUSTOM_IMAGE_STATUSES)[number];

export const CUSTOM_IMAGE_KINDS = ['snapshot', 'image', 'provider_template'] as const;
export type CustomImageKind = (typeof CUSTOM_IMAGE_KINDS)[number];

const TRANSITIONS: Record<CustomImageStatus, readonly CustomImageStatus[]> = {
  // A newer capture or a rollback replaces it; Disable retires it.
  active: ['superseded', 'revoked'],
  // Rollback makes the image it superseded active again.
  superseded: ['active'],
  revoked: [],
  failed: [],
};

export function transitionCustomImage(from: CustomImageStatus, to: CustomImageStatus): CustomImageStatus {
  if (!TRANSITIONS[from].includes(to)) throw new InvalidTransition('custom image', from, to);
  return to;
}
