import type { SandcastClient } from '@sandcast/client';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { expect } from 'vitest';

/**
 * A session on a real provider, end to end: start (the compute and its bootstrap), exec, files
 * both ways, end; then the provider no longer has the compute, while the records stay.
 */
export async function runSessionFlow(options: {
  client: SandcastClient;
  provider: SandboxProvider;
  name: string;
  config: Record<string, unknown>;
}): Promise<void> {
  const { client, provider, name } = options;
  const env = await client.environments.create({
    name,
    provider: provider.id,
    config: options.config,
    spec: { bootstrap: ['mkdir -p /workspace/boot && echo "booted on $(uname -s)" > /workspace/boot/marker'] },
  });
  const agent = await client.agents.create({
    name,
    sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
  });
  const session = await client.sessions.start({ agentId: agent.id });
  const view = await client.sessions.sandbox(session.id);
  expect(view, view.failureReason ?? '').toMatchObject({ observedState: 'running', target: { provider: provider.id } });
  expect(view.capabilities).toMatchObject({ nativeProcesses: true, packages: true, pty: true, networkEnforced: true });

  expect((await client.sessions.readFile(session.id, '/workspace/boot/marker')).content).toBe('booted on Linux\n');
  const ran = await client.sessions.exec(session.id, {
    command: ['sh', '-c', 'echo "$((6*7))" > /workspace/answer; cat /workspace/answer'],
  });
  expect(ran).toMatchObject({ exitCode: 0, stdout: '42\n' });

  const bytes = Buffer.from([0, 255, 1, 254, 10, 13]);
  await client.sessions.writeFile(session.id, '/workspace/blob.bin', { content: bytes.toString('base64'), encoding: 'base64' });
  const sum = await client.sessions.exec(session.id, { command: ['sh', '-c', 'od -An -tx1 /workspace/blob.bin | tr -d " \\n"'] });
  expect(sum.stdout).toBe('00ff01fe0a0d');
  await client.sessions.writeFile(session.id, '/workspace/notes.txt', { content: 'written through the session\n' });
  expect(await client.sessions.readFile(session.id, '/workspace/notes.txt')).toMatchObject({
    encoding: 'utf8',
    content: 'written through the session\n',
  });
  const read = await client.sessions.readFile(session.id, '/workspace/blob.bin');
  expect(read.encoding).toBe('base64');
  expect(Buffer.from(read.content, 'base64').equals(bytes)).toBe(true);

  const sandboxId = session.primarySandboxId!;
  const before = await provider.listInstances();
  expect(before.some((i) => i.ownerId === sandboxId)).toBe(true);
  expect((await client.sessions.end(session.id)).status).toBe('ended');
  const after = await provider.listInstances();
  expect(after.some((i) => i.ownerId === sandboxId)).toBe(false);
  expect((await client.sessions.sandbox(session.id)).observedState).toBe('deleted');
  expect((await client.sessions.get(session.id)).status).toBe('ended');
}
