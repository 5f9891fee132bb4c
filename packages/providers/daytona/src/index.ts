export { DAYTONA_CLOUD_API_URL, daytonaConfigSchema } from './config.ts';
export { createDaytonaProvider, DAYTONA_CAPABILITIES, DAYTONA_LABELS } from './daytona-provider.ts';
export { createDaytonaFactory } from './factory.ts';
