import type { Availability } from '@sandcast/provider-sdk';
import { withTimeout } from '../with-timeout.ts';

const AVAILABILITY_TIMEOUT_MS = 3_000;

/** A provider's availability; one that hangs or throws reads as unavailable with the reason instead. */
export function availabilityOf(check: () => Promise<Availability>): Promise<Availability> {
  return withTimeout(check(), AVAILABILITY_TIMEOUT_MS, 'the availability check').catch((e: Error) => ({
    available: false as const,
    reason: e.message,
  }));
}
