import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandcast } from './support/cli.ts';
import { startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

/** Runs a command that must succeed and returns its JSON answer. */
async function json<T = Record<string, unknown>>(args: string[], env: Record<string, string>): Promise<T> {
  const result = await sandcast(['--json', ...args], env);
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

// Each command is a process of its own (a tsx start): the default 30 s does not fit a dozen of them on a busy machine.
describe('sandcast agent and session commands against a running server (fake provider)', { timeout: 120_000 }, () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    env = { SANDCAST_URL: t.url };
    await t.client.settings.update({ experimental: { enableEnvironments: true } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('environment spec flags make revisions, and env show prints the spec', async () => {
    const created = await sandcast(
      ['env', 'create', 'spec-env', '--provider', 'fake', '--bootstrap', 'echo one', '--idle-after', '600'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('when idle:    stops after 10 min without activity');
    const updated = await sandcast(
      ['env', 'update', 'spec-env', '--bootstrap', 'echo two', '--idle-action', 'keep_running', '--display-name', 'Spec box'],
      env,
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain('revision 1 → 2');
    const shown = await json<{ spec: Record<string, unknown> }>(['env', 'show', 'spec-env'], env);
    expect(shown.spec).toMatchObject({
      displayName: 'Spec box',
      bootstrap: ['echo one', 'echo two'],
      lifecycle: { idleAfterSeconds: 600, idleAction: 'keep_running' },
    });
    const cleared = await json<{ spec: { bootstrap: string[] } }>(['env', 'update', 'spec-env', '--bootstrap-clear'], env);
    expect(cleared.spec.bootstrap).toEqual([]);
    const refused = await sandcast(['env', 'update', 'spec-env', '--idle-after', '1'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--idle-after must be at least');
    expect((await sandcast(['env', 'update', 'spec-env', '--durability', 'forever'], env)).code).toBe(2);
  });

  it('agent → session → its sandbox → exec → end, pinned to the revision the binding names', async () => {
    expect((await sandcast(['env', 'create', 'work', '--provider', 'fake'], env)).code).toBe(0);
    expect((await sandcast(['env', 'update', 'work', '--set', 'cpu=2'], env)).code).toBe(0);
    const revisions = await t.client.environments.revisions((await t.client.environments.resolve('work')).id);
    const revisionId = (n: number) => revisions.find((r) => r.number === n)!.id;

    const agent = await json<{
      id: string;
      currentVersion: { sandboxPolicy: { bindings: Record<string, { environmentRevisionId: string }> } };
    }>(['agent', 'create', 'coder', '--mode', 'selectable', '--bind', 'latest=work', '--bind', 'first=work@1', '--default', 'latest'], env);
    // "Use latest" wrote the exact current revision; @1 the first.
    expect(agent.currentVersion.sandboxPolicy.bindings).toEqual({
      latest: { environmentRevisionId: revisionId(2) },
      first: { environmentRevisionId: revisionId(1) },
    });
    const shown = await sandcast(['agent', 'show', 'coder'], env);
    expect(shown.stdout).toMatch(/first +work rev 1 \(current is 2\)/);
    expect(shown.stdout).toMatch(/latest \(default\) +work rev 2 \(current\)/);
    expect((await sandcast(['agent', 'list'], env)).stdout).toMatch(/^coder +selectable +first, latest +latest +1 +active/m);

    const session = await json<{ id: string; primarySandboxId: string; bindingName: string }>(
      ['session', 'start', 'coder', '--use', 'first'],
      env,
    );
    expect(session.bindingName).toBe('first');

    const workspace = await sandcast(['session', 'sandbox', session.id], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    expect(workspace.stdout).toContain(`sandbox:       ${session.primarySandboxId}`);
    expect(workspace.stdout).toContain(`revision:      1 (${revisionId(1)}) (pinned)`);
    expect(workspace.stdout).toContain('target:        fake');
    expect(workspace.stdout).toMatch(/^generation: +\d+$/m);
    expect(workspace.stdout).toMatch(/^allowed: +.*exec/m);

    const ran = await sandcast(['session', 'exec', session.id, '--', 'sh', '-c', 'echo hi; echo oops >&2; exit 3'], env);
    expect(ran).toMatchObject({ code: 3, stdout: 'hi\n', stderr: 'oops\n' });

    // Editing the environment and moving the binding make a new version; the running session keeps its pin.
    expect((await sandcast(['env', 'update', 'work', '--set', 'cpu=3'], env)).code).toBe(0);
    const moved = await sandcast(['agent', 'update', 'coder', '--bind', 'first=work'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain('~ first: work rev 1 (current is 3) → work rev 3 (current)');
    expect(moved.stdout).toContain('version 1 → 2');
    expect((await json<{ environmentRevisionId: string }>(['session', 'sandbox', session.id], env)).environmentRevisionId).toBe(
      revisionId(1),
    );

    // Stopped, the session's sandbox refuses commands and says how to start it; resumed, it has its files.
    expect((await sandcast(['session', 'exec', session.id, '--', 'sh', '-c', 'echo kept > kept.txt'], env)).code).toBe(0);
    const stopped = await sandcast(['session', 'stop', session.id], env);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain(`stopped the sandbox of session ${session.id} (stopped)`);
    const asleep = await sandcast(['session', 'sandbox', session.id], env);
    expect(asleep.stdout).toMatch(/^state: +stopped \(desired stopped\)$/m);
    expect(asleep.stdout).toMatch(/^allowed: +start, end$/m);
    const refused = await sandcast(['session', 'exec', session.id, '--', 'true'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('`sandcast session resume <session>`');
    const resumed = await sandcast(['session', 'resume', session.id], env);
    expect(resumed.stdout).toContain(`started the sandbox of session ${session.id} (running)`);
    expect(await sandcast(['session', 'exec', session.id, '--', 'cat', 'kept.txt'], env)).toMatchObject({ code: 0, stdout: 'kept\n' });

    // The same sandbox by its own id: desired against observed, and its generation.
    const byId = await sandcast(['sandbox', 'stop', session.primarySandboxId], env);
    expect(byId.stdout).toMatch(/^status: +stopped \(desired stopped\)$/m);
    expect(byId.stdout).toMatch(/^generation: +\d+$/m);
    expect(byId.stdout).toContain(`session:       ${session.id}`);
    expect((await sandcast(['sandbox', 'list'], env)).stdout).toMatch(
      new RegExp(`^${session.primarySandboxId} +stopped +stopped +\\d+ +work +base +cold boot +${session.id}`, 'm'),
    );
    expect((await sandcast(['sandbox', 'start', session.primarySandboxId], env)).stdout).toMatch(/^status: +running \(desired ready\)$/m);

    expect((await sandcast(['session', 'list'], env)).stdout).toMatch(
      new RegExp(`^${session.id} +coder +active +first +${session.primarySandboxId}`, 'm'),
    );
    const ended = await sandcast(['session', 'end', session.id], env);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toContain(`ended session ${session.id}`);
    expect((await sandcast(['session', 'show', session.id], env)).stdout).toMatch(/^status: +ended /m);
  });

  it('a fixed agent refuses --use, in the server’s words and what to do instead', async () => {
    expect((await sandcast(['env', 'create', 'solo-env', '--provider', 'fake'], env)).code).toBe(0);
    expect((await sandcast(['agent', 'create', 'solo', '--mode', 'fixed', '--bind', 'main=solo-env'], env)).code).toBe(0);
    const refused = await sandcast(['session', 'start', 'solo', '--use', 'main'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('this agent has a fixed sandbox; session overrides are not allowed (unprocessable)');
    expect(refused.stderr).toContain('start the session without --use or --inline-config');
    const started = await json<{ id: string; bindingName: string }>(['session', 'start', 'solo'], env);
    expect(started.bindingName).toBe('main');
    expect((await sandcast(['session', 'end', started.id], env)).code).toBe(0);
    const archived = await sandcast(['agent', 'archive', 'solo'], env);
    expect(archived.stdout).toContain('archived agent solo');
    expect((await sandcast(['agent', 'list'], env)).stdout).not.toMatch(/^solo /m);
    expect((await sandcast(['agent', 'list', '--all'], env)).stdout).toMatch(/^solo +fixed .* archived/m);
  });

  it('a configurable agent takes one-off settings the instance allows, and says how to allow more', async () => {
    expect((await sandcast(['env', 'create', 'knobs', '--provider', 'fake'], env)).code).toBe(0);
    expect((await sandcast(['agent', 'create', 'tuner', '--mode', 'configurable', '--bind', 'main=knobs'], env)).code).toBe(0);
    const refused = await sandcast(['session', 'start', 'tuner', '--inline-config', 'cpu=2'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('`sandcast settings set sessions.inlineProviders …`');
    expect(refused.stderr, refused.stderr).not.toContain('sandbox.inline');
    expect((await sandcast(['settings', 'set', 'sessions.inlineProviders', '["fake"]'], env)).code).toBe(0);
    const started = await json<{ id: string }>(['session', 'start', 'tuner', '--inline-config', 'cpu=2'], env);
    expect((await sandcast(['session', 'end', started.id], env)).code).toBe(0);
  });

  it('an agent key is allowed the agents named, and keys list says which', async () => {
    const { key } = await json<{ key: { id: string } }>(['keys', 'create', 'robot', '--role', 'agent'], env);
    const allowed = await sandcast(['keys', 'allow-agents', key.id, 'coder'], env);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('may start sessions for: coder');
    expect((await sandcast(['keys', 'list'], env)).stdout).toMatch(new RegExp(`^${key.id} +robot +agent +\\S+ +coder `, 'm'));
    expect((await sandcast(['keys', 'allow-agents', key.id, '--none'], env)).stdout).toContain('may start sessions for: none');
  });
});
