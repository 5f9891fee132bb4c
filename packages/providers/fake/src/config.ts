import { secret } from '@sandcast/provider-sdk';
import { z } from 'zod';

/** Config of the fake provider: a few realistic fields plus failure injection for tests. */
export const fakeConfigSchema = z.strictObject({
  /** A label standing in for a base image; part of the boot source. */
  image: z.string().min(1).default('fake-base'),
  /** Runtime knobs: accepted and recorded, not enforced. */
  cpu: z.number().positive().max(64).optional(),
  memoryMb: z.number().int().positive().optional(),
  /** A secret, to exercise encryption at rest and redaction. */
  apiToken: secret(z.string().min(1)).optional(),
  simulate: z
    .strictObject({
      /** `create` and `startInteractiveSetup` throw a backend error with this message. */
      failCreate: z.string().optional(),
      /** `captureTemplate` throws capture_failed with this message. */
      failCapture: z.string().optional(),
      /** `fork` makes this many forks, then fails the next one with a backend error (and removes what it made). */
      failForkAfter: z.number().int().min(0).max(16).optional(),
      /** `captureTemplate` waits this long first (to observe the capturing state). */
      captureDelayMs: z.number().int().min(0).max(600_000).optional(),
    })
    .optional(),
});

export type FakeConfig = z.infer<typeof fakeConfigSchema>;
