/**
 * A provider that measures nothing but the control plane: the fake provider (its instances are
 * directories) under the id `local`, with every command answered in memory, no process started.
 */
import { createFakeProvider } from '@sandcast/provider-fake';
import type { ExecResult, SandboxProvider } from '@sandcast/provider-sdk';

const EXITED: ExecResult = {
  exitCode: 0,
  timedOut: false,
  stdout: '',
  stderr: '',
  truncated: { stdout: false, stderr: false },
  totalBytes: { stdout: 0, stderr: 0 },
};

export function createNullProvider(dataDir: string): SandboxProvider {
  return { ...createFakeProvider({ dataDir, id: 'local' }), exec: async () => EXITED };
}
