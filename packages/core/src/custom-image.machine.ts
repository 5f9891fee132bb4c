import { defineMachine } from './machine.ts';

/**
 * Custom image lifecycle. One image per environment is `active` (a database invariant).
 *
 *   active ◄──► superseded      (a newer capture supersedes; Rollback swaps back)
 *   active ───► revoked         (Disable)
 *   failed                      (a capture that did not complete; terminal)
 *
 * Images are inserted `active` (a capture) or `failed`; every later change follows the table.
 */
export const CUSTOM_IMAGE_STATUSES = ['active', 'superseded', 'revoked', 'failed'] as const;
export type CustomImageStatus = (typeof CUSTOM_IMAGE_STATUSES)[number];

export const CUSTOM_IMAGE_KINDS = ['snapshot', 'image', 'provider_template'] as const;
export type CustomImageKind = (typeof CUSTOM_IMAGE_KINDS)[number];

export const customImageMachine = defineMachine<CustomImageStatus>('custom image', CUSTOM_IMAGE_STATUSES, {
  active: [
    // A newer capture was promoted, or a Rollback restored the image this one replaced.
    'superseded',
    // Disable: runs go back to the base configuration.
    'revoked',
  ],
  superseded: [
    // Rollback makes the image it superseded active again.
    'active',
  ],
  revoked: [],
  failed: [],
});
