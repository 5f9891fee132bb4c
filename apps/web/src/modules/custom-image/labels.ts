import type { CustomImageTemplateBody, SetupSessionBody } from '@sandcast/contracts';
import type { StatusTone } from '../../components/StatusBadge.tsx';

export const ACTIVE_SESSION_STATUSES: ReadonlySet<SetupSessionBody['status']> = new Set(['starting', 'waiting_for_user', 'capturing']);

export function sessionTone(status: SetupSessionBody['status']): StatusTone {
  switch (status) {
    case 'starting':
    case 'waiting_for_user':
    case 'capturing':
      return 'running';
    case 'promoted':
      return 'active';
    case 'failed':
      return 'failed';
    case 'timed_out':
      return 'warning';
    case 'cancelled':
      return 'muted';
  }
}

export function templateTone(status: CustomImageTemplateBody['status']): StatusTone {
  switch (status) {
    case 'active':
      return 'active';
    case 'superseded':
      return 'muted';
    case 'revoked':
      return 'neutral';
    case 'failed':
      return 'failed';
  }
}

export const KIND_LABEL: Record<CustomImageTemplateBody['kind'], string> = {
  snapshot: 'Snapshot',
  image: 'Image',
  provider_template: 'Provider template',
};

/** What "Last used" says of an image no run has booted from, the same in every place. */
export const NOT_USED_YET = 'Not used by a run yet';

/** The id every custom image toast of one environment shares, so they merge instead of piling up. */
export const customImageToastId = (environmentId: string) => `custom-image:${environmentId}`;

/** The toasts that say what the next run boots from. */
export const TOASTS = {
  promoted: 'Future runs can use the promoted template.',
  rolledBack: 'Future runs will use the previous template.',
  disabled: 'Future runs will use the base provider configuration.',
  unchanged: 'The active template was not changed.',
} as const;
