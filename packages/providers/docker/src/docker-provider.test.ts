import { randomBytes } from 'node:crypto';
import type { SandboxProvider, TemplateRef } from '@sandcast/provider-sdk';
import { isProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerProvider } from './docker-provider.ts';
import { LABEL } from './labels.ts';
import { dockerSkipReason, TEST_IMAGE, testDocker } from './test-support/test-engine.ts';

const ENVIRONMENT = 'env-docker-tests';
const config = { image: TEST_IMAGE, memoryMb: 256, pidsLimit: 128, cpu: 0.5 };
const id = (prefix: string) => `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isProviderError(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
  return error as { code: string; message: string };
}

describe('docker provider against a real engine', () => {
  let provider: SandboxProvider;
  let docker: Docker;
  let skip: string | null = null;
  const cleanup: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    skip = await dockerSkipReason();
    if (skip && process.env.CI === 'true') throw new Error(`CI=true but the Docker tests cannot run: ${skip}`);
    if (skip) {
      console.warn(`[docker] skipped: ${skip}`);
      return;
    }
    provider = createDockerProvider({ dataDir: '/tmp/sandcast-docker-tests' });
    docker = testDocker();
  }, 600_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }, 120_000);

  const test = (name: string, body: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (skip) ctx.skip();
      await body();
    }, 120_000);

  const sandbox = async (template?: TemplateRef, cfg: Record<string, unknown> = config) => {
    const sandboxId = id('sbx');
    const { instanceId } = await provider.create({ sandboxId, environmentId: ENVIRONMENT, config: cfg, template });
    cleanup.push(() => provider.destroy(instanceId));
    return { sandboxId, instanceId };
  };

  const setup = async (source: TemplateRef | null = null) => {
    const setupSessionId = id('setup');
    const lease = await provider.startInteractiveSetup({ setupSessionId, environmentId: ENVIRONMENT, config, source, ttlSeconds: 600 });
    cleanup.push(() => provider.cancelInteractiveSetup(lease.leaseId));
    return { setupSessionId, leaseId: lease.leaseId };
  };

  const capture = async (
    s: { setupSessionId: string; leaseId: string },
    onProgress?: (p: { phase: string; fraction?: number | undefined }) => void,
  ) => {
    const template = await provider.captureTemplate({
      leaseId: s.leaseId,
      setupSessionId: s.setupSessionId,
      environmentId: ENVIRONMENT,
      onProgress,
    });
    cleanup.push(() => provider.deleteTemplate(template));
    return template;
  };

  const labelled = async (label: string, value: string) => docker.listContainers({ all: true, filters: { label: [`${label}=${value}`] } });

  test('availability names the address when no engine answers there', async () => {
    const missing = createDockerProvider({ dataDir: '/tmp/x', dockerHost: '/tmp/sandcast-no-such-docker.sock' });
    const availability = await missing.availability();
    expect(availability.available).toBe(false);
    expect(availability.available === false && availability.reason).toMatch(
      /^no Docker engine reachable at unix:\/\/\/tmp\/sandcast-no-such-docker\.sock/,
    );
  });

  test('an image missing from the engine is refused as invalid_config, naming the image', async () => {
    const error = await errorOf(
      provider.create({ sandboxId: id('sbx'), environmentId: ENVIRONMENT, config: { image: 'sandcast-test/absent:none' } }),
    );
    expect(error.code).toBe('invalid_config');
    expect(error.message).toContain('sandcast-test/absent:none');
  });

  test('sandboxes carry the labels, limits and hardening the config asks for', async () => {
    const { sandboxId, instanceId } = await sandbox();
    const info = await docker.getContainer(instanceId).inspect();
    expect(info.Config.Labels).toMatchObject({
      [LABEL.managed]: 'true',
      [LABEL.kind]: 'sandbox',
      [LABEL.sandbox]: sandboxId,
      [LABEL.environment]: ENVIRONMENT,
    });
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);
    expect(info.HostConfig.PidsLimit).toBe(128);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.Config.WorkingDir).toBe('/workspace');
  });

  test('network none: the sandbox has no interface but loopback', async () => {
    const { instanceId } = await sandbox();
    const result = await provider.exec(instanceId, { command: ['sh', '-c', 'ls /sys/class/net'] });
    expect(result.stdout.split(/\s+/).filter(Boolean)).toEqual(['lo']);
  });

  test('exec keeps large stdout and stderr apart and passes binary-safe stdin', async () => {
    const { instanceId } = await sandbox();
    const input = randomBytes(300_000).toString('base64');
    const result = await provider.exec(instanceId, {
      command: ['sh', '-c', 'cat; head -c 200000 /dev/zero | tr "\\0" e >&2'],
      stdin: input,
    });
    expect(result.stdout).toBe(input);
    expect(result.stderr).toBe('e'.repeat(200_000));
    expect(result.exitCode).toBe(0);
  });

  test('a timeout shorter than the wrapper start-up still kills the tree; a missing cwd is a value on stderr', async () => {
    const { instanceId } = await sandbox();
    const secs = 5000 + Math.floor(Math.random() * 900);
    const result = await provider.exec(instanceId, { command: ['sh', '-c', `sleep ${secs} & sleep ${secs}`], timeoutMs: 1 });
    expect(result.timedOut).toBe(true);
    const left = await provider.exec(instanceId, {
      command: [
        'sh',
        '-c',
        `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`,
      ],
    });
    expect(left.stdout.trim()).toBe('0');
    const missing = await provider.exec(instanceId, { command: ['pwd'], cwd: '/no/such/dir' });
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('/no/such/dir');
  });

  test('a vanished container reads as missing and its operations say not_found', async () => {
    const { instanceId } = await sandbox();
    await docker.getContainer(instanceId).remove({ force: true });
    expect(await provider.inspect(instanceId)).toEqual({ status: 'missing' });
    expect((await errorOf(provider.exec(instanceId, { command: ['true'] }))).code).toBe('not_found');
    expect((await errorOf(provider.readFile(instanceId, '/etc/hostname'))).code).toBe('not_found');
    await provider.destroy(instanceId);
  });

  test('a stopped container reads as stopped', async () => {
    const { instanceId } = await sandbox();
    await docker.getContainer(instanceId).stop({ t: 0 });
    expect((await provider.inspect(instanceId)).status).toBe('stopped');
  });

  test('capture contains the setup files and not the setup processes', async () => {
    const s = await setup();
    const secs = 4000 + Math.floor(Math.random() * 900);
    await provider.exec(s.leaseId, {
      command: ['sh', '-c', `echo tool > /opt/tool.txt && echo ws > kept.txt && (sleep ${secs} >/dev/null 2>&1 &)`],
    });
    const running = `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`;
    expect((await provider.exec(s.leaseId, { command: ['sh', '-c', running] })).stdout.trim()).toBe('1');

    const phases: string[] = [];
    const fractions: number[] = [];
    const template = await capture(s, (p) => {
      phases.push(p.phase);
      if (p.fraction !== undefined) fractions.push(p.fraction);
    });
    expect(template).toMatchObject({ kind: 'image', ref: expect.stringMatching(/^sandcast\/env-docker-tests:setup-/) });
    expect(template.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(template.sizeBytes).toBeGreaterThan(0);
    expect(phases).toContain('committing');
    expect(phases.at(-1)).toBe('done');
    expect(fractions.at(-1)).toBe(1);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);

    const booted = await sandbox(template);
    expect((await provider.exec(booted.instanceId, { command: ['sh', '-c', 'cat /opt/tool.txt kept.txt'] })).stdout).toBe('tool\nws\n');
    expect((await provider.exec(booted.instanceId, { command: ['sh', '-c', running] })).stdout.trim()).toBe('0');
  });

  test('a captured image does not carry ownership: a container run from it by hand is not managed', async () => {
    const s = await setup();
    const template = await capture(s);
    const image = await docker.getImage(template.ref).inspect();
    expect(image.Config.Labels?.[LABEL.managed]).toBe('false');
    expect(image.Config.Labels?.[LABEL.setup]).toBe('');
    expect(image.Config.Entrypoint ?? []).not.toContain('sleep');

    const byHand = await docker.createContainer({ Image: template.ref, Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
    cleanup.push(() => byHand.remove({ force: true }));
    const listed = await provider.listInstances();
    expect(listed.some((i) => i.instanceId === byHand.id)).toBe(false);

    const booted = await sandbox(template);
    expect(listed.concat(await provider.listInstances()).filter((i) => i.instanceId === booted.instanceId)).toContainEqual({
      instanceId: booted.instanceId,
      ownerId: booted.sandboxId,
      ownerKind: 'sandbox',
    });
  });

  test('an older image stays bootable after a newer capture, and after the newer one is deleted', async () => {
    const first = await setup();
    await provider.exec(first.leaseId, { command: ['sh', '-c', 'echo v1 > /opt/version'] });
    const v1 = await capture(first);
    await provider.cancelInteractiveSetup(first.leaseId);

    const second = await setup(v1);
    await provider.exec(second.leaseId, { command: ['sh', '-c', 'echo v2 > /opt/version && echo new > /opt/new'] });
    const v2 = await capture(second);
    await provider.cancelInteractiveSetup(second.leaseId);
    expect(v2.ref).not.toBe(v1.ref);

    const fromV1 = await sandbox(v1);
    expect((await provider.exec(fromV1.instanceId, { command: ['sh', '-c', 'cat /opt/version; test -e /opt/new; echo $?'] })).stdout).toBe(
      'v1\n1\n',
    );
    await provider.destroy(fromV1.instanceId);

    await provider.deleteTemplate(v2);
    const again = await sandbox(v1);
    expect((await provider.exec(again.instanceId, { command: ['cat', '/opt/version'] })).stdout).toBe('v1\n');
  });

  test('deleteTemplate refuses while a container uses the image, then removes it', async () => {
    const s = await setup();
    const template = await capture(s);
    await provider.cancelInteractiveSetup(s.leaseId);
    const user = await sandbox(template);
    const refused = await errorOf(provider.deleteTemplate(template));
    expect(refused.code).toBe('in_use');
    expect(refused.message).toContain(user.sandboxId);
    expect((await provider.exec(user.instanceId, { command: ['true'] })).exitCode).toBe(0);

    await provider.destroy(user.instanceId);
    await provider.deleteTemplate(template);
    await expect(docker.getImage(template.ref).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await provider.deleteTemplate(template);
  });

  test('cancel and destroy leave no labelled container and no anonymous volume behind', async () => {
    // An image declaring a volume, so the container gets an anonymous one.
    const base = await docker.createContainer({ Image: TEST_IMAGE, Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
    const volumeRepo = 'sandcast-test/with-volume';
    const volumeTag = `t${process.pid}`;
    await base.commit({ repo: volumeRepo, tag: volumeTag, changes: 'VOLUME ["/data"]' });
    await base.remove({ force: true });
    cleanup.push(() => docker.getImage(`${volumeRepo}:${volumeTag}`).remove({ force: true }));

    const { sandboxId, instanceId } = await sandbox(undefined, { ...config, image: `${volumeRepo}:${volumeTag}` });
    const mounts = (await docker.getContainer(instanceId).inspect()).Mounts;
    const volume = mounts.find((m) => m.Destination === '/data')?.Name;
    expect(volume).toBeTruthy();
    await provider.destroy(instanceId);
    expect(await labelled(LABEL.sandbox, sandboxId)).toEqual([]);
    await expect(docker.getVolume(volume as string).inspect()).rejects.toMatchObject({ statusCode: 404 });

    const s = await setup();
    expect(await labelled(LABEL.setup, s.setupSessionId)).toHaveLength(1);
    await provider.cancelInteractiveSetup(s.leaseId);
    expect(await labelled(LABEL.setup, s.setupSessionId)).toEqual([]);
    expect((await provider.listInstances()).some((i) => i.instanceId === s.leaseId || i.instanceId === instanceId)).toBe(false);
  });

  test('listChanges reports added, modified and deleted paths with types and sizes', async () => {
    const s = await setup();
    await provider.exec(s.leaseId, {
      command: [
        'sh',
        '-c',
        'mkdir -p /opt/app && head -c 1234 /dev/zero > /opt/app/blob && ln -s blob /opt/app/link && echo x >> /etc/issue && rm /etc/debian_version',
      ],
    });
    const changes = await provider.listChanges(s.leaseId);
    expect(changes).toContainEqual({ path: '/opt/app', kind: 'added', type: 'directory', sizeBytes: null });
    expect(changes).toContainEqual({ path: '/opt/app/blob', kind: 'added', type: 'file', sizeBytes: 1234 });
    expect(changes).toContainEqual(expect.objectContaining({ path: '/opt/app/link', kind: 'added', type: 'symlink' }));
    expect(changes).toContainEqual(expect.objectContaining({ path: '/etc/issue', kind: 'modified', type: 'file' }));
    expect(changes).toContainEqual(expect.objectContaining({ path: '/etc/debian_version', kind: 'deleted' }));
    expect(changes.some((c) => c.path.endsWith('docker-init'))).toBe(false);
    // Directories whose entries changed (/etc, /opt) or whose mtime moved (/usr, /workspace) are not changes of their own.
    expect(changes.filter((c) => c.type === 'directory' && c.kind === 'modified')).toEqual([]);
    expect(changes.some((c) => c.path === '/workspace')).toBe(false);
  });

  test('files: relative paths land in the workspace, symlinks are followed, modes are kept', async () => {
    const { instanceId } = await sandbox();
    await provider.writeFile(instanceId, 'notes/a.txt', Buffer.from('hello'), { mode: 0o600 });
    expect((await provider.readFile(instanceId, '/workspace/notes/a.txt')).toString()).toBe('hello');
    await provider.exec(instanceId, { command: ['ln', '-s', 'notes/a.txt', 'link'] });
    expect((await provider.readFile(instanceId, 'link')).toString()).toBe('hello');
    expect((await provider.exec(instanceId, { command: ['stat', '-c', '%a', 'notes/a.txt'] })).stdout.trim()).toBe('600');
    expect((await errorOf(provider.readFile(instanceId, '/workspace/notes'))).code).toBe('invalid_config');
  });

  test('closing a PTY hangs its session up', async () => {
    const { instanceId } = await sandbox();
    const pty = await provider.openPty(instanceId, { cols: 80, rows: 24, command: ['sh', '-c', 'sleep 4321'] });
    const count = [
      'sh',
      '-c',
      'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep 4321" || true',
    ];
    await expect.poll(async () => (await provider.exec(instanceId, { command: count })).stdout.trim(), { timeout: 5_000 }).toBe('1');
    pty.close();
    await expect.poll(async () => (await provider.exec(instanceId, { command: count })).stdout.trim(), { timeout: 5_000 }).toBe('0');
  });
});
