import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';

/** The image fake pods run; built by packages/providers/docker/scripts/ci-setup.sh. */
export const TEST_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

/** Why the fake cluster cannot run here (no Docker engine, no test image, no openssl), or null. */
export async function fakeClusterSkipReason(): Promise<string | null> {
  try {
    await promisify(execFile)('openssl', ['version']);
  } catch (error) {
    return `openssl is needed for the fake API server's certificate (${(error as Error).message})`;
  }
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (error) {
    return `no Docker engine reachable for the fake cluster's node (${(error as Error).message})`;
  }
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch {
    return `the test image ${TEST_IMAGE} is missing; build it with packages/providers/docker/scripts/ci-setup.sh`;
  }
  return null;
}
