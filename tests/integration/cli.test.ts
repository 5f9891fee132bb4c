import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, sandcast } from './support/cli.ts';
import { startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('sandcast CLI against a running server', () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    env = { SANDCAST_URL: t.url };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('turns environments on, creates, updates and lists an environment', async () => {
    const set = await sandcast(['settings', 'set', 'experimental.enableEnvironments', 'true'], env);
    expect(set).toMatchObject({ code: 0, stdout: expect.stringContaining('experimental.enableEnvironments = true') });

    const created = await sandcast(['env', 'create', 'cli-env', '--provider', 'fake', '--set', 'cpu=2', '--set', 'apiToken=sekret'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created environment cli-env');
    expect(created.stdout).not.toContain('sekret');

    const updated = await sandcast(['env', 'update', 'cli-env', '--set', 'cpu=4'], env);
    expect(updated.stdout).toContain('revision 1 → 2');
    // --set round-trips the secret placeholder: the stored secret is kept.
    const id = (await t.client.environments.resolve('cli-env')).id;
    expect((await t.server.services.environments.getOpen(id)).config.apiToken).toBe('sekret');

    const revisions = await sandcast(['--json', 'env', 'revisions', 'cli-env'], env);
    expect(JSON.parse(revisions.stdout).map((r: { number: number }) => r.number)).toEqual([2, 1]);

    const list = await sandcast(['env', 'list'], env);
    expect(list.stdout).toMatch(/cli-env\s+fake\s+2/);
  });

  it('prints the server error and exits 1 when the server refuses', async () => {
    const result = await sandcast(['env', 'create', 'Not Valid', '--provider', 'fake'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('validation_failed');
    expect(result.stderr).toContain('name:');
  });

  it('a Docker environment without an image names the field and the fix', async () => {
    const result = await sandcast(['env', 'create', 'cli-docker', '--provider', 'docker'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the docker config is invalid: image: required — the Docker image to boot, e.g. debian:bookworm');
    expect(result.stderr).toContain('--set image=…: required');
    expect(result.stderr).not.toContain('expected string, received undefined');
    const typed = await sandcast(['env', 'create', 'cli-fake-typed', '--provider', 'fake', '--set', 'cpu="two"'], env);
    expect(typed.stderr).toContain('cpu: must be a number, not string');
  });

  it('speaks in commands and flags, not API routes and request fields', async () => {
    const unknown = await sandcast(['env', 'create', 'cli-nope', '--provider', 'nope'], env);
    expect(unknown.stderr).toContain('`sandcast targets` lists the registered ones');
    expect(unknown.stderr).not.toContain('/api/');

    await sandcast(['env', 'create', 'cli-ttl', '--provider', 'fake'], env);
    const ttl = await sandcast(['image', 'setup', 'cli-ttl', '--ttl', '5', '--no-wait'], env);
    expect(ttl.code).toBe(1);
    expect(ttl.stderr).toContain('sandcast: --ttl must be at least 60 (validation_failed)');

    const first = await sandcast(['image', 'setup', 'cli-ttl', '--no-wait'], env);
    expect(first.code, first.stderr).toBe(0);
    const busy = await sandcast(['image', 'setup', 'cli-ttl', '--no-wait'], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('a setup session is already "Setup running"');
    expect(busy.stderr).toContain('sandcast image cancel <env>');
    expect(busy.stderr).not.toContain('waiting_for_user');
    expect((await sandcast(['image', 'cancel', 'cli-ttl'], env)).code).toBe(0);
  });

  it('exits 2 for a usage mistake and 3 when the server is unreachable', async () => {
    expect((await sandcast(['env', 'create', 'x'], env)).code).toBe(2);
    const unreachable = await sandcast(['targets'], { SANDCAST_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain('cannot reach Sandcast');
  });

  it('lists targets and manages keys', async () => {
    const targets = await sandcast(['targets'], env);
    expect(targets.stdout).toMatch(/fake\s+Fake \(tests\)\s+yes/);
    const created = await sandcast(['--json', 'keys', 'create', 'robot', '--role', 'agent'], env);
    const { key, secret } = JSON.parse(created.stdout);
    expect(secret).toMatch(/^sc_/);
    const revoked = await sandcast(['keys', 'revoke', key.id], env);
    expect(revoked.stdout).toContain(`revoked ${key.id}`);
  });

  // A cold start (tsx, migrations) under load can take long: the test waits for the summary, and only a hung start hits this cap.
  it('start prints where everything is, keeps request logs at debug, and stops on SIGTERM', { timeout: 120_000 }, async () => {
    const { spawn } = await import('node:child_process');
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-cli-start-'));
    const child = spawn(process.execPath, [CLI, 'start'], {
      env: { ...process.env, SANDCAST_PORT: '0', SANDCAST_SSH_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      // The summary is the readiness signal: it is printed once the server listens.
      const summary = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/^Logs follow/m.test(stderr)) resolve(stderr);
        });
        child.on('exit', (code) => reject(new Error(`start exited with ${code} before its summary:\n${stderr}`)));
      });
      const url = /^ {2}API {2,}(http:\/\/\S+)\/api$/m.exec(summary)?.[1];
      expect(url, summary).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(summary).toContain(`${url}/api/docs`);
      expect(summary).toMatch(/^ {2}SSH gateway +127\.0\.0\.1:\d+ /m);
      expect(summary).toContain(dataDir);
      expect(summary).toContain(`embedded PGlite in ${path.join(dataDir, 'db')}`);
      expect(summary).toContain('local_trusted');
      expect(summary).toMatch(/^ {4}local +Local/m);
      expect(summary).toMatch(/^ {4}docker +\S.* — (available|unavailable: .+)$/m);

      const health = await fetch(`${url}/api/health`).then((r) => r.json());
      expect(health).toMatchObject({ ok: true, database: 'pglite' });
      const exited = new Promise<number | null>((r) => child.on('exit', r));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // At info, the request above left no log line; the start and shutdown lines are there.
      expect(stdout).toContain('sandcast listening');
      expect(stdout).not.toContain('/api/health');
      expect((await readFile(path.join(dataDir, 'secret.key'), 'utf8')).length).toBeGreaterThan(40);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
