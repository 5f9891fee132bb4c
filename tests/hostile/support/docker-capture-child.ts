/**
 * A capturing process to kill: captures a setup container with the Docker provider of the same
 * installation as a server (same data dir) and prints each progress report (`phase <name> <fraction>`), so a test can kill -9
 * it in the middle of the commit. Usage: docker-capture-child.ts <dataDir> <leaseId> <setupSessionId> <environmentId>
 */
import { createDockerProvider } from '@sandcast/provider-docker';

const [dataDir, leaseId, setupSessionId, environmentId] = process.argv.slice(2);
if (!dataDir || !leaseId || !setupSessionId || !environmentId) {
  process.stderr.write('usage: docker-capture-child.ts <dataDir> <leaseId> <setupSessionId> <environmentId>\n');
  process.exit(2);
}
const provider = createDockerProvider({ dataDir, diskCheckIntervalMs: 3_600_000 });
await provider.captureTemplate({
  leaseId,
  setupSessionId,
  environmentId,
  onProgress: (progress) => process.stdout.write(`phase ${progress.phase} ${progress.fraction ?? ''}\n`),
});
process.stdout.write('captured\n');
await provider.close?.();
