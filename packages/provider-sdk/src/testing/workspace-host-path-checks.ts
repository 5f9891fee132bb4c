import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { isProviderError } from '../errors.ts';
import type { SandboxProvider } from '../provider.ts';

type Test = (name: string, body: (requires: (condition: boolean, reason: string) => void) => Promise<void>) => void;

const errorCode = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (isProviderError(error) ? error.code : String(error)),
  );

/** Checks of `workspaceHostPath`, for providers that offer it (the checkpoint engine's fast path). */
export function workspaceHostPathChecks(options: {
  test: Test;
  provider: () => SandboxProvider;
  createSandbox: () => Promise<{ instanceId: string }>;
}): void {
  const { test } = options;
  const offered = () => typeof options.provider().workspaceHostPath === 'function';

  test('workspaceHostPath: the host directory shows what the sandbox wrote, and the sandbox sees what is written there', async (requires) => {
    requires(offered(), 'no workspaceHostPath');
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const bytes = Buffer.from([0, 1, 2, 200, 255]);
    await provider.writeFile(instanceId, '/workspace/dir/data.bin', bytes);
    const host = await provider.workspaceHostPath!(instanceId, '/workspace');
    expect(host, 'a running sandbox on this machine has a host path').toEqual(expect.any(String));
    expect(Buffer.compare(await readFile(path.join(host!, 'dir/data.bin')), bytes)).toBe(0);
    await writeFile(path.join(host!, 'from-host.txt'), 'hello from the host\n');
    expect((await provider.exec(instanceId, { command: ['cat', '/workspace/from-host.txt'] })).stdout).toBe('hello from the host\n');
    expect(await provider.workspaceHostPath!(instanceId, '/workspace/dir')).toBe(path.join(host!, 'dir'));
  });

  test('workspaceHostPath: no symlink or `..` in the path leads out of the sandbox root', async (requires) => {
    requires(offered(), 'no workspaceHostPath');
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    const root = await provider.workspaceHostPath!(instanceId, '/');
    expect(root).toEqual(expect.any(String));
    expect(root).not.toBe('/');
    const made = await provider.exec(instanceId, {
      command: [
        'sh',
        '-c',
        'mkdir -p /workspace/real && ln -s /etc /workspace/etc-abs && ln -s ../../../../../../.. /workspace/up && ln -s loop /workspace/loop',
      ],
    });
    expect(made.exitCode).toBe(0);
    expect(await provider.workspaceHostPath!(instanceId, '/workspace/etc-abs')).toBe(path.join(root!, 'etc'));
    expect(await provider.workspaceHostPath!(instanceId, '/workspace/up')).toBe(root);
    expect(await provider.workspaceHostPath!(instanceId, '/workspace/up/workspace/real')).toBe(path.join(root!, 'workspace/real'));
    expect(await provider.workspaceHostPath!(instanceId, '/../../../workspace/real')).toBe(path.join(root!, 'workspace/real'));
    expect(await errorCode(provider.workspaceHostPath!(instanceId, '/workspace/loop'))).toBe('invalid_input');
    expect(await errorCode(provider.workspaceHostPath!(instanceId, '/workspace/nope'))).toBe('not_found');
    expect(await errorCode(provider.workspaceHostPath!(instanceId, '/workspace/a\0b'))).toBe('invalid_input');
  });

  test('workspaceHostPath: null once stopped, not_found once destroyed', async (requires) => {
    requires(offered(), 'no workspaceHostPath');
    const provider = options.provider();
    const { instanceId } = await options.createSandbox();
    if (provider.capabilities.stopStart) {
      await provider.stop!(instanceId);
      expect(await provider.workspaceHostPath!(instanceId, '/workspace')).toBeNull();
    }
    await provider.destroy(instanceId);
    expect(await errorCode(provider.workspaceHostPath!(instanceId, '/workspace'))).toBe('not_found');
  });
}
