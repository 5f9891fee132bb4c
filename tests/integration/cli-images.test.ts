import { spawn } from 'node:child_process';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './support/cli.ts';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `sandcast` binary; `drive` may talk to it over stdin while it runs. */
function sandcast(
  args: string[],
  env: Record<string, string>,
  drive?: (child: { stdin: NodeJS.WritableStream; interrupt: () => void; waitFor: (text: string) => Promise<void> }) => Promise<void>,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const listeners = new Set<() => void>();
    const onData = () => {
      for (const l of listeners) l();
    };
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      onData();
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      onData();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    if (!drive) {
      child.stdin.end();
      return;
    }
    const waitFor = (text: string) =>
      new Promise<void>((done) => {
        const check = () => {
          if (!(stdout + stderr).includes(text)) return;
          listeners.delete(check);
          done();
        };
        listeners.add(check);
        check();
      });
    drive({ stdin: child.stdin, interrupt: () => child.kill('SIGINT'), waitFor }).catch(reject);
  });
}

/** What `cat <files>` prints in a fresh sandbox of the environment (the in-process client, to keep the test quick). */
async function filesInNewSandbox(client: SandcastClient, environmentId: string): Promise<{ imageId: string | null; present: string[] }> {
  const sandbox = await client.sandboxes.create({ environmentId });
  try {
    const present: string[] = [];
    for (const file of ['one.txt', 'two.txt']) {
      if ((await client.sandboxes.exec(sandbox.id, { command: ['test', '-f', file] })).exitCode === 0) present.push(file);
    }
    return { imageId: sandbox.imageId, present };
  } finally {
    await client.sandboxes.delete(sandbox.id);
  }
}

describe('sandcast image and sandbox commands against a running server (fake provider)', () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    env = { SANDCAST_URL: t.url };
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('walks the whole flow: setup, exec, changes, finish, sandbox, refresh, rollback, disable, history', { timeout: 120_000 }, async () => {
    expect((await sandcast(['env', 'create', 'img', '--provider', 'fake', '--config', '{}'], env)).code).toBe(0);
    const environmentId = (await t.client.environments.resolve('img')).id;

    const status0 = await sandcast(['image', 'status', 'img'], env);
    expect(status0).toMatchObject({ code: 0, stdout: expect.stringContaining('active image:  none') });
    expect(status0.stdout).toContain('Template setup');

    // First capture, scripted.
    const setup = await sandcast(['image', 'setup', 'img', '--no-wait', '--ttl', '600'], env);
    expect(setup.code, setup.stderr).toBe(0);
    expect(setup.stdout).toContain('browser terminal');
    expect(setup.stdout).toContain('sandcast image exec img --');
    expect(setup.stdout).toContain('sandcast image finish img');
    expect(setup.stdout).toContain('starts from the base provider configuration');

    const wrote = await sandcast(['image', 'exec', 'img', '--', 'sh', '-c', 'echo one > one.txt && echo wrote && echo warn >&2'], env);
    expect(wrote).toMatchObject({ code: 0, stdout: 'wrote\n', stderr: 'warn\n' });
    const failed = await sandcast(['image', 'exec', 'img', '--', 'sh', '-c', 'exit 5'], env);
    expect(failed.code).toBe(5);

    const changes = await sandcast(['image', 'changes', 'img'], env);
    expect(changes.code, changes.stderr).toBe(0);
    expect(changes.stdout).toMatch(/added\s+file\s+4 B\s+\S*one\.txt/);

    const finished = await sandcast(['image', 'finish', 'img'], env);
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain('Template captured');
    expect(finished.stderr).toContain('Capturing template… done');
    const first = (await t.client.customImages.overview(environmentId)).activeTemplate!;
    expect(finished.stdout).toContain(first.id);

    // A sandbox boots from it, through the CLI.
    const created = await sandcast(['--json', 'sandbox', 'create', 'img'], env);
    expect(created.code, created.stderr).toBe(0);
    const sandbox = JSON.parse(created.stdout);
    expect(sandbox.imageId).toBe(first.id);
    const cat = await sandcast(['sandbox', 'exec', sandbox.id, '--', 'cat', 'one.txt'], env);
    expect(cat).toMatchObject({ code: 0, stdout: 'one\n' });
    expect((await sandcast(['sandbox', 'exec', sandbox.id, '--', 'sh', '-c', 'exit 3'], env)).code).toBe(3);
    const shown = await sandcast(['sandbox', 'show', sandbox.id], env);
    expect(shown.stdout).toMatch(new RegExp(`booted from:\\s+image ${first.id}`));
    expect((await sandcast(['sandbox', 'list'], env)).stdout).toMatch(
      new RegExp(`${sandbox.id}\\s+\\S+\\s+\\S+\\s+\\d+\\s+img\\s+image ${first.id}`),
    );
    // Stopped, it refuses commands; started again, it has its files.
    expect((await sandcast(['sandbox', 'stop', sandbox.id], env)).stdout).toContain(`stopped sandbox ${sandbox.id} (stopped)`);
    expect((await sandcast(['sandbox', 'exec', sandbox.id, '--', 'true'], env)).code).not.toBe(0);
    expect((await sandcast(['sandbox', 'start', sandbox.id], env)).stdout).toContain(`started sandbox ${sandbox.id} (running)`);
    expect((await sandcast(['sandbox', 'exec', sandbox.id, '--', 'cat', 'one.txt'], env)).stdout).toBe(cat.stdout);
    expect((await sandcast(['sandbox', 'rm', sandbox.id], env)).stdout).toContain(`deleted sandbox ${sandbox.id}`);

    // Refresh: a second session starts from the active image.
    const refresh = await sandcast(['--json', 'image', 'setup', 'img', '--no-wait'], env);
    expect(refresh.code, refresh.stderr).toBe(0);
    const refreshed = JSON.parse(refresh.stdout);
    expect(refreshed.session.sourceTemplateId).toBe(first.id);
    expect(refreshed.connectionPayload.type).toBe('pty');
    expect((await sandcast(['image', 'exec', refreshed.session.id, '--', 'sh', '-c', 'echo two > two.txt'], env)).code).toBe(0);
    expect((await sandcast(['image', 'finish', refreshed.session.id], env)).code).toBe(0);
    const second = (await t.client.customImages.overview(environmentId)).activeTemplate!;
    expect(second.id).not.toBe(first.id);
    expect(await filesInNewSandbox(t.client, environmentId)).toEqual({ imageId: second.id, present: ['one.txt', 'two.txt'] });

    const rollback = await sandcast(['image', 'rollback', 'img'], env);
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(rollback.stdout).toContain('Future runs will use the previous template.');
    expect(await filesInNewSandbox(t.client, environmentId)).toEqual({ imageId: first.id, present: ['one.txt'] });

    const disable = await sandcast(['image', 'disable', 'img'], env);
    expect(disable.code, disable.stderr).toBe(0);
    expect(disable.stdout).toContain('Future runs will use the base provider configuration.');
    expect(await filesInNewSandbox(t.client, environmentId)).toEqual({ imageId: null, present: [] });
    expect((await sandcast(['sandbox', 'create', 'img'], env)).stdout).toMatch(/booted from:\s+base/);

    const history = await sandcast(['image', 'history', 'img'], env);
    expect(history.code).toBe(0);
    const rows = history.stdout.trim().split('\n').slice(1);
    expect(rows.map((r) => r.split(/\s+/).slice(0, 2))).toEqual([
      [second.id, 'superseded'],
      [first.id, 'revoked'],
    ]);
    const status = await sandcast(['--json', 'image', 'status', 'img'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ activeTemplate: null, latestSession: { status: 'promoted' } });
  });

  it('setup waits for a line on stdin to capture, and cancels at the end of input or on Ctrl-C', { timeout: 60_000 }, async () => {
    await t.client.environments.create({ name: 'wait', provider: 'fake', config: {} });
    const environmentId = (await t.client.environments.resolve('wait')).id;

    const captured = await sandcast(['image', 'setup', 'wait'], env, async (child) => {
      await child.waitFor('Waiting for a line on stdin');
      const { activeSession } = await t.client.customImages.overview(environmentId);
      await t.client.customImages.exec(activeSession!.id, { command: ['sh', '-c', 'echo waited > one.txt'] });
      child.stdin.write('\n');
    });
    expect(captured.code, captured.stderr).toBe(0);
    expect(captured.stdout).toContain('Template captured');
    const template = (await t.client.customImages.overview(environmentId)).activeTemplate!;
    expect(await filesInNewSandbox(t.client, environmentId)).toEqual({ imageId: template.id, present: ['one.txt'] });

    const cancelled = await sandcast(['image', 'setup', 'wait'], env, async (child) => {
      await child.waitFor('Waiting for a line on stdin');
      const { activeSession } = await t.client.customImages.overview(environmentId);
      await t.client.customImages.exec(activeSession!.id, { command: ['sh', '-c', 'echo never > two.txt'] });
      child.stdin.end();
    });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain('Setup cancelled');
    const after = await t.client.customImages.overview(environmentId);
    expect(after).toMatchObject({ activeSession: null, latestSession: { status: 'cancelled' }, activeTemplate: { id: template.id } });
    expect(await filesInNewSandbox(t.client, environmentId)).toEqual({ imageId: template.id, present: ['one.txt'] });

    // Ctrl-C cancels too, and exits as an interrupted command does.
    const interrupted = await sandcast(['image', 'setup', 'wait'], env, async (child) => {
      await child.waitFor('Waiting for a line on stdin');
      child.interrupt();
    });
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stdout).toContain('Setup cancelled');
    const latest = (await t.client.customImages.overview(environmentId)).latestSession!;
    expect(latest.status).toBe('cancelled');
    const activity = await t.client.activity({ action: 'environment.custom_image_setup.cancelled' });
    expect(activity.find((a) => a.subjectId === latest.id)?.details).toMatchObject({ reason: expect.stringContaining('Ctrl-C') });
  });

  it('shows boot-source drift, relinks only when confirmed, and probes the environment', async () => {
    const environment = await t.client.environments.create({ name: 'drift', provider: 'fake', config: {} });
    const { session } = await t.client.customImages.startSetup(environment.id);
    const { template } = await t.client.customImages.finish(session.id);
    await t.client.environments.update(environment.id, { config: { image: 'another-base' } });

    const status = await sandcast(['image', 'status', 'drift'], env);
    expect(status.stdout).toContain('matches config: no — the boot source changed (config.image)');
    const refused = await sandcast(['image', 'relink', 'drift'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sandcast image relink drift --confirm-boot-source-drift');
    const relinked = await sandcast(['image', 'relink', 'drift', '--confirm-boot-source-drift'], env);
    expect(relinked).toMatchObject({ code: 0, stdout: expect.stringContaining('Future runs will use it again.') });

    const probe = await sandcast(['image', 'probe', 'drift'], env);
    expect(probe.code, probe.stderr).toBe(0);
    expect(probe.stdout).toContain(`OK: drift booted from image ${template.id}`);
    expect(probe.stdout).toMatch(/^ {2}user id: \d+$/m);
    expect(probe.stdout).not.toMatch(/^ {2}\d+$/m);
    const help = await sandcast(['image', 'disable', '--help'], env);
    expect(help.stdout.match(/default/g) ?? []).toHaveLength(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('without it, the provider keeps its copy');
  });

  it('refuses with the server’s or its own words: no session, a second session, nothing to roll back', async () => {
    await t.client.environments.create({ name: 'refuse', provider: 'fake', config: {} });
    const noSession = await sandcast(['image', 'finish', 'refuse'], env);
    expect(noSession.code).toBe(1);
    expect(noSession.stderr).toContain('no setup session is running for environment "refuse"');

    expect((await sandcast(['image', 'setup', 'refuse', '--no-wait'], env)).code).toBe(0);
    const second = await sandcast(['image', 'setup', 'refuse', '--no-wait'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('(conflict)');
    const cancel = await sandcast(['image', 'cancel', 'refuse', '--reason', 'not today'], env);
    expect(cancel).toMatchObject({ code: 0, stdout: expect.stringContaining('Setup cancelled') });

    const rollback = await sandcast(['image', 'rollback', 'refuse'], env);
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain('(not_found)');
    expect((await sandcast(['image', 'setup', 'refuse', '--ttl', 'soon'], env)).code).toBe(2);
    expect((await sandcast(['image', 'changes', 'no-such-thing'], env)).stderr).toContain('no environment or setup session');
  });

  it('finish shows likely secrets and refuses off a terminal without --yes; edits and rollback say what happened to the image', async () => {
    await t.client.environments.create({ name: 'review', provider: 'fake', config: {} });
    expect((await sandcast(['image', 'setup', 'review', '--no-wait'], env)).code).toBe(0);
    const token = ['ghp', '9fK2xQ7LmZ3vB8nR1tY6wP4sD0hJ5gC2aE7u'].join('_');
    const wrote = await sandcast(
      ['image', 'exec', 'review', '--', 'sh', '-c', `printf 'NAME=deploy\\nTOKEN=${token}\\n' > deploy.env`],
      env,
    );
    expect(wrote.code, wrote.stderr).toBe(0);

    const refused = await sandcast(['image', 'finish', 'review'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ {2}\S*deploy\.env:2: GitHub token/m);
    expect(refused.stderr).toContain('not captured: the capture review found 1 likely secret(s)');
    expect(refused.stderr).toContain('pass --yes to capture anyway');
    expect(refused.stderr).not.toContain(token);
    const reviewId = (await t.client.environments.resolve('review')).id;
    expect(await t.client.customImages.overview(reviewId)).toMatchObject({
      activeTemplate: null,
      activeSession: { status: 'waiting_for_user' },
    });

    // `image setup` asks the same before its Enter-to-capture: off a terminal it refuses, and the session keeps running.
    const other = await t.client.environments.create({ name: 'review-setup', provider: 'fake', config: {} });
    const viaSetup = await sandcast(['image', 'setup', 'review-setup'], env, async (child) => {
      await child.waitFor('Waiting for a line on stdin');
      const { activeSession } = await t.client.customImages.overview(other.id);
      await t.client.customImages.exec(activeSession!.id, { command: ['sh', '-c', `echo TOKEN=${token} > deploy.env`] });
      child.stdin.write('\n');
    });
    expect(viaSetup.code).toBe(1);
    expect(viaSetup.stderr).toContain('deploy.env:1: GitHub token');
    expect(viaSetup.stderr).toContain('the setup session is still running');
    expect((await t.client.customImages.overview(other.id)).activeSession).toMatchObject({ status: 'waiting_for_user' });
    expect((await sandcast(['image', 'cancel', 'review-setup'], env)).code).toBe(0);

    const captured = await sandcast(['image', 'finish', 'review', '--yes'], env);
    expect(captured.code, captured.stderr).toBe(0);
    expect(captured.stderr).toContain('deploy.env:2: GitHub token');
    expect(captured.stdout).toContain('Template captured');

    const knob = await sandcast(['env', 'update', 'review', '--set', 'cpu=2'], env);
    expect(knob.stdout).toContain('still active (only runtime settings changed)');
    const moved = await sandcast(['env', 'update', 'review', '--set', 'image=another-base'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toMatch(/Custom image \S+ detached: the change moved the boot source \(config\.image\)/);
    expect(moved.stdout).toContain('sandcast image relink review --confirm-boot-source-drift');

    expect((await sandcast(['image', 'relink', 'review', '--confirm-boot-source-drift'], env)).code).toBe(0);
    expect((await sandcast(['image', 'disable', 'review'], env)).code).toBe(0);
    const rollback = await sandcast(['image', 'rollback', 'review'], env);
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toMatch(/review has no active custom image: \S+ was disabled .* ago \(/);
    expect(rollback.stderr).toContain('A disabled image cannot be made active again.');
    expect(rollback.stderr).toContain('capture one: sandcast image setup review');
  });
});
