import { secret } from '@sandcast/provider-sdk';
import { z } from 'zod';

/** Daytona's own cloud; a self-hosted Daytona answers at its own `/api` URL. */
export const DAYTONA_CLOUD_API_URL = 'https://app.daytona.io/api';

const minutes = (what: string) =>
  z
    .number()
    .int()
    .min(-1)
    .max(525_600)
    .describe(`${what} in minutes (0 disables it${what.startsWith('Auto-delete') ? '; -1 never deletes' : ''})`);

/** An environment on Daytona: what its sandboxes boot from and how the vendor ages them. */
export const daytonaConfigSchema = z.strictObject({
  snapshot: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("The Daytona snapshot sandboxes boot from; default: the account's default snapshot"),
  cpu: z.number().int().min(1).max(64).optional().describe('vCPUs (only with an image; a snapshot fixes its own)'),
  memoryGb: z.number().int().min(1).max(256).optional().describe('Memory in GiB'),
  diskGb: z.number().int().min(1).max(1024).optional().describe('Disk in GiB'),
  autoStopMinutes: minutes('Auto-stop after this long idle').default(15),
  autoArchiveMinutes: minutes('Auto-archive after this long stopped').default(10_080),
  autoDeleteMinutes: minutes('Auto-delete after this long stopped').default(-1),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string())
    .default({})
    .describe('Environment variables of every sandbox'),
});
export type DaytonaConfig = z.infer<typeof daytonaConfigSchema>;

/** Runtime tuning: changing these does not change what a captured snapshot was built from. */
export const DAYTONA_RUNTIME_KNOBS = ['cpu', 'memoryGb', 'diskGb', 'autoStopMinutes', 'autoArchiveMinutes', 'autoDeleteMinutes'] as const;

/** Where the account is (cloud or self-hosted); not a secret. */
export const daytonaConnectionConfigSchema = z.strictObject({
  apiUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .default(DAYTONA_CLOUD_API_URL)
    .describe('The Daytona API URL: the cloud, or a self-hosted server (…/api)'),
  target: z.string().min(1).max(64).optional().describe('The region sandboxes are created in; default: the account default'),
});

/** The credential, stored encrypted and never returned. */
export const daytonaConnectionSecretsSchema = z.strictObject({
  apiKey: secret(z.string().min(1).max(4096).describe('A Daytona API key (Dashboard → Keys)')),
});

export interface DaytonaConnectionSettings {
  apiUrl: string;
  target?: string | undefined;
  apiKey: string;
}
