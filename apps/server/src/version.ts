import { readFileSync } from 'node:fs';

/** The Sandcast version, from the repository's root package.json. */
export const SANDCAST_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
