import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { defaultEngineAddress } from '../connection.ts';

/** The base image tests and the benchmark boot from; built locally because no registry is reachable. */
export const TEST_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

const CI_SETUP = fileURLToPath(new URL('../../scripts/ci-setup.sh', import.meta.url));

export function testDocker(): Docker {
  return new Docker(defaultEngineAddress(undefined).options);
}

/**
 * Why the Docker tests cannot run here (no engine, or the base image cannot be built), or null
 * once the engine answers and the base image exists. Builds the image when it is missing.
 */
export async function dockerSkipReason(): Promise<string | null> {
  const address = defaultEngineAddress(undefined);
  try {
    await testDocker().ping();
  } catch (error) {
    return `no Docker engine reachable at ${address.url} (${(error as Error).message})`;
  }
  try {
    await promisify(execFile)('bash', [CI_SETUP, TEST_IMAGE], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    return `could not prepare the base image ${TEST_IMAGE}: ${e.stderr?.trim() || e.message}`;
  }
  return null;
}
