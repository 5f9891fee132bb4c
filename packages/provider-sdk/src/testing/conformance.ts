import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError } from '../errors.ts';
import type { ProviderConfig, PtyStream, SandboxProvider, TemplateRef } from '../provider.ts';
import { execStreamChecks } from './exec-stream-checks.ts';
import { workspaceHostPathChecks } from './workspace-host-path-checks.ts';

export interface ConformanceOptions {
  /** Shown in the suite's name. */
  name: string;
  createProvider(): Promise<SandboxProvider>;
  /** A config the provider's schema accepts and that boots quickly. */
  config: ProviderConfig;
  /**
   * Why the suite cannot run on this machine (no engine, no runtime), or null. Under CI=true a
   * reason fails the suite instead of skipping it: CI must prove the real thing.
   */
  skipReason?: (() => Promise<string | null>) | undefined;
  /** Removes an instance behind the provider's back, as a crash or an outside `rm` would. */
  vanish?: ((provider: SandboxProvider, instanceId: string) => Promise<void>) | undefined;
  /**
   * Whether sandboxes have a root filesystem of their own (default true). A provider without
   * one (the fake, which runs host processes in a temp dir) is checked only inside its workdir.
   */
  isolatedRoot?: boolean | undefined;
  /** Per-test timeout; default 60 s. */
  timeoutMs?: number | undefined;
}

let counter = 0;
const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** Resolves when `predicate` holds for the text a PTY printed so far. */
export function waitForPtyOutput(pty: PtyStream, predicate: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`PTY output did not match within ${timeoutMs} ms; got: ${JSON.stringify(text.slice(-500))}`));
    }, timeoutMs);
    const sub = pty.onData((chunk) => {
      text += chunk.toString('utf8');
      if (predicate(text)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(text);
      }
    });
  });
}

async function expectProviderError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected a ProviderError with code ${code}`).not.toBeNull();
  expect(isProviderError(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe(code);
}

async function streamToBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * The provider conformance suite (ARCHITECTURE §5): every provider runs it. It checks the core
 * lifecycle, exec semantics, PTY, files, workspace transfer, missing instances, garbage
 * collection listing, and — where the capabilities say so — setup, capture, boot from capture,
 * refresh, cancel and template deletion.
 */
export function describeProviderConformance(options: ConformanceOptions): void {
  const timeout = options.timeoutMs ?? 60_000;
  const isolatedRoot = options.isolatedRoot ?? true;

  describe(`provider conformance: ${options.name}`, () => {
    let provider: SandboxProvider;
    let skip: string | null = null;
    const cleanup: Array<() => Promise<void>> = [];

    beforeAll(async () => {
      skip = (await options.skipReason?.()) ?? null;
      if (skip && process.env.CI === 'true') throw new Error(`CI=true but the ${options.name} provider cannot run: ${skip}`);
      if (skip) {
        console.warn(`[conformance:${options.name}] skipped: ${skip}`);
        return;
      }
      provider = await options.createProvider();
    }, timeout);

    afterAll(async () => {
      for (const step of cleanup.reverse()) await step().catch(() => undefined);
      await provider?.close?.();
    }, timeout);

    /**
     * A conformance test. `requires(condition, reason)` skips it, with the reason in the report,
     * when the provider lacks what the test proves: a missing capability is never a pass.
     */
    const test = (name: string, body: (requires: (condition: boolean, reason: string) => void) => Promise<void>) =>
      it(
        name,
        async (ctx) => {
          if (skip) ctx.skip(skip);
          await body((condition, reason) => {
            if (!condition) ctx.skip(`${options.name}: ${reason}`);
          });
        },
        timeout,
      );

    const createSandbox = async (template?: TemplateRef) => {
      const sandboxId = uniqueId('conf');
      const created = await provider.create({ sandboxId, environmentId: 'env-conformance', config: options.config, template });
      cleanup.push(() => provider.destroy(created.instanceId));
      return { sandboxId, instanceId: created.instanceId };
    };

    test('reports itself available and accepts its own test config', async () => {
      // A capability the provider claims has its operations.
      if (provider.capabilities.stopStart) expect([typeof provider.stop, typeof provider.start]).toEqual(['function', 'function']);
      if (provider.capabilities.egressProxy) expect(typeof provider.networkNamespace).toBe('function');
      expect(await provider.availability()).toEqual({ available: true });
      expect(provider.configSchema.safeParse(options.config).success).toBe(true);
      expect(provider.id).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(provider.displayName.length).toBeGreaterThan(0);
    });

    test('create → running → exec returns exit code and separated output', async () => {
      const { instanceId } = await createSandbox();
      expect((await provider.inspect(instanceId)).status).toBe('running');

      const ok = await provider.exec(instanceId, { command: ['sh', '-c', 'echo out; echo err >&2'] });
      expect(ok).toEqual({
        exitCode: 0,
        stdout: 'out\n',
        stderr: 'err\n',
        timedOut: false,
        truncated: { stdout: false, stderr: false },
        totalBytes: { stdout: 4, stderr: 4 },
      });

      const failed = await provider.exec(instanceId, { command: ['sh', '-c', 'exit 3'] });
      expect(failed.exitCode).toBe(3);
      expect(failed.timedOut).toBe(false);
    });

    test('exec honours cwd, env and stdin', async () => {
      const { instanceId } = await createSandbox();
      const where = await provider.exec(instanceId, { command: ['pwd'] });
      if (isolatedRoot) expect(where.stdout.trim()).toBe('/workspace');
      else expect(where.stdout.trim()).toMatch(/\/workspace$/);
      await provider.exec(instanceId, { command: ['mkdir', '-p', 'inner'] });
      const cwd = await provider.exec(instanceId, { command: ['pwd'], cwd: '/workspace/inner' });
      expect(cwd.stdout.trim()).toMatch(isolatedRoot ? /^\/workspace\/inner$/ : /\/workspace\/inner$/);
      const env = await provider.exec(instanceId, { command: ['sh', '-c', 'printf %s "$GREETING"'], env: { GREETING: 'hi there' } });
      expect(env.stdout).toBe('hi there');
      const stdin = await provider.exec(instanceId, { command: ['cat'], stdin: 'from stdin' });
      expect(stdin.stdout).toBe('from stdin');
    });

    test('exec timeout kills the whole process tree and says so', async () => {
      const { instanceId } = await createSandbox();
      // A duration unlikely to be used by anything else on the machine, to find our processes.
      // It also outlasts the test's timeout, so an exec that waited for it fails the test.
      const secs = Math.ceil(timeout / 1000) + 17 + Math.floor(Math.random() * 800);
      const result = await provider.exec(instanceId, {
        command: ['sh', '-c', `(sleep ${secs}; echo leaked > leak) & sleep ${secs}`],
        timeoutMs: 500,
      });
      expect(result.timedOut).toBe(true);
      // Read /proc directly: minimal images have no ps.
      const after = await provider.exec(instanceId, {
        command: [
          'sh',
          '-c',
          `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`,
        ],
      });
      expect(after.stdout.trim()).toBe('0');
    });

    execStreamChecks({ test, provider: () => provider, createSandbox });

    test('files round-trip as bytes; a missing file is not_found', async () => {
      const { instanceId } = await createSandbox();
      const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
      await provider.writeFile(instanceId, '/workspace/dir/data.bin', bytes);
      expect(Buffer.compare(await provider.readFile(instanceId, '/workspace/dir/data.bin'), bytes)).toBe(0);
      const seen = await provider.exec(instanceId, { command: ['sh', '-c', 'wc -c < dir/data.bin'] });
      expect(seen.stdout.trim()).toBe('7');
      await expectProviderError(provider.readFile(instanceId, '/workspace/nope.txt'), 'not_found');
    });

    test('workspace exports and imports as a tar stream', async () => {
      const source = await createSandbox();
      await provider.exec(source.instanceId, {
        command: ['sh', '-c', 'mkdir -p sub && echo one > a.txt && echo two > sub/b.txt'],
      });
      const tar = await streamToBuffer(await provider.exportWorkspace(source.instanceId));
      expect(tar.length).toBeGreaterThan(512);

      const target = await createSandbox();
      await provider.importWorkspace(target.instanceId, Readable.from([tar]));
      const read = await provider.exec(target.instanceId, { command: ['sh', '-c', 'cat a.txt sub/b.txt'] });
      expect(read.stdout).toBe('one\ntwo\n');
    });

    workspaceHostPathChecks({ test, provider: () => provider, createSandbox });

    test('listInstances names the sandboxes it created', async () => {
      const { sandboxId, instanceId } = await createSandbox();
      const listed = await provider.listInstances();
      expect(listed).toContainEqual({ instanceId, ownerId: sandboxId, ownerKind: 'sandbox' });
    });

    test('destroy removes the instance; later calls say not_found; destroying twice is fine', async () => {
      const { instanceId } = await createSandbox();
      await provider.destroy(instanceId);
      expect((await provider.inspect(instanceId)).status).toBe('missing');
      await provider.destroy(instanceId);
      await expectProviderError(provider.exec(instanceId, { command: ['true'] }), 'not_found');
      expect((await provider.listInstances()).some((i) => i.instanceId === instanceId)).toBe(false);
    });

    test('an instance that vanished behind the provider reads as missing', async () => {
      if (!options.vanish) throw new Error(`the ${options.name} conformance run must pass a vanish() helper`);
      const { instanceId } = await createSandbox();
      await options.vanish?.(provider, instanceId);
      expect((await provider.inspect(instanceId)).status).toBe('missing');
      await provider.destroy(instanceId);
    });

    test("names a running sandbox's own network namespace, for the egress relay (egressProxy)", async (requires) => {
      requires(provider.capabilities.egressProxy === true, 'no egressProxy capability');
      const { instanceId } = await createSandbox();
      const path = await provider.networkNamespace!(instanceId);
      const [theirs, ours] = await Promise.all([stat(path), stat('/proc/self/ns/net')]);
      // Its own: never the host's network namespace.
      expect(theirs.ino === ours.ino && theirs.dev === ours.dev).toBe(false);
      await expectProviderError(provider.networkNamespace!('missing-instance'), 'not_found');
    });

    describe('stop and start', () => {
      const stopStart = () => provider.capabilities.stopStart;

      test('stop keeps the disk; start brings the same instance back with its files', async (requires) => {
        requires(stopStart(), 'no stopStart capability');
        const { sandboxId, instanceId } = await createSandbox();
        const wrote = await provider.exec(instanceId, { command: ['sh', '-c', 'echo kept > kept.txt'] });
        expect(wrote.exitCode).toBe(0);
        await provider.stop!(instanceId);
        expect((await provider.inspect(instanceId)).status).toBe('stopped');
        await expectProviderError(provider.exec(instanceId, { command: ['true'] }), 'not_running');
        // Stopping a stopped instance is fine; it is still listed as its sandbox's.
        await provider.stop!(instanceId);
        expect(await provider.listInstances()).toContainEqual({ instanceId, ownerId: sandboxId, ownerKind: 'sandbox' });
        await provider.start!(instanceId);
        expect((await provider.inspect(instanceId)).status).toBe('running');
        const read = await provider.exec(instanceId, { command: ['sh', '-c', 'cat kept.txt; echo again > again.txt; cat again.txt'] });
        expect(read).toMatchObject({ exitCode: 0, stdout: 'kept\nagain\n' });
        // Starting a running instance is fine too.
        await provider.start!(instanceId);
        expect((await provider.exec(instanceId, { command: ['cat', 'kept.txt'] })).stdout).toBe('kept\n');
      });

      test('a stopped instance can be destroyed', async (requires) => {
        requires(stopStart(), 'no stopStart capability');
        const { instanceId } = await createSandbox();
        await provider.stop!(instanceId);
        await provider.destroy(instanceId);
        expect((await provider.inspect(instanceId)).status).toBe('missing');
        expect((await provider.listInstances()).some((i) => i.instanceId === instanceId)).toBe(false);
      });

      test('stop and start of a missing instance are not_found', async (requires) => {
        requires(stopStart(), 'no stopStart capability');
        const { instanceId } = await createSandbox();
        await provider.destroy(instanceId);
        await expectProviderError(provider.stop!(instanceId), 'not_found');
        await expectProviderError(provider.start!(instanceId), 'not_found');
      });

      test('without the capability, stop and start are refused as unsupported', async (requires) => {
        requires(!stopStart(), 'it offers stop and start, so there is no refusal to observe');
        const { instanceId } = await createSandbox();
        if (provider.stop) await expectProviderError(provider.stop(instanceId), 'unsupported');
        if (provider.start) await expectProviderError(provider.start(instanceId), 'unsupported');
        expect((await provider.inspect(instanceId)).status).toBe('running');
      });
    });

    describe('fork', () => {
      test('a file written before the fork is in every fork; a write in one is seen nowhere else', async () => {
        const { instanceId } = await createSandbox();
        if (!provider.capabilities.fork) {
          if (provider.fork) await expectProviderError(provider.fork(instanceId, [{ sandboxId: uniqueId('fork') }]), 'unsupported');
          return;
        }
        expect(typeof provider.fork).toBe('function');
        expect((await provider.exec(instanceId, { command: ['sh', '-c', 'echo before > shared.txt'] })).exitCode).toBe(0);
        const targets = [{ sandboxId: uniqueId('fork') }, { sandboxId: uniqueId('fork') }];
        const forks = await provider.fork!(instanceId, targets);
        for (const fork of forks) cleanup.push(() => provider.destroy(fork.instanceId));
        expect(forks).toHaveLength(2);
        expect(new Set([instanceId, ...forks.map((f) => f.instanceId)]).size).toBe(3);
        for (const fork of forks) {
          expect((await provider.inspect(fork.instanceId)).status).toBe('running');
          expect((await provider.exec(fork.instanceId, { command: ['cat', 'shared.txt'] })).stdout).toBe('before\n');
        }
        // Each fork is listed as its own sandbox's.
        const listed = await provider.listInstances();
        for (const [index, fork] of forks.entries())
          expect(listed).toContainEqual({ instanceId: fork.instanceId, ownerId: targets[index]!.sandboxId, ownerKind: 'sandbox' });
        const [first, second] = forks as [{ instanceId: string }, { instanceId: string }];
        await provider.exec(first.instanceId, { command: ['sh', '-c', 'echo first > shared.txt; echo mine > only-first.txt'] });
        await provider.exec(instanceId, { command: ['sh', '-c', 'echo source-after > after.txt'] });
        const look = ['sh', '-c', 'cat shared.txt; [ -e only-first.txt ] && echo has-first; [ -e after.txt ] && echo has-after; true'];
        expect((await provider.exec(instanceId, { command: look })).stdout).toBe('before\nhas-after\n');
        expect((await provider.exec(second.instanceId, { command: look })).stdout).toBe('before\n');
        expect((await provider.exec(first.instanceId, { command: look })).stdout).toBe('first\nhas-first\n');
        // Destroying the source leaves the forks whole.
        await provider.destroy(instanceId);
        expect((await provider.exec(second.instanceId, { command: ['cat', 'shared.txt'] })).stdout).toBe('before\n');
      });

      test('fork of a missing instance is not_found', async (requires) => {
        requires(provider.capabilities.fork === true, 'no fork capability (the refusal is checked above)');
        const { instanceId } = await createSandbox();
        await provider.destroy(instanceId);
        await expectProviderError(provider.fork!(instanceId, [{ sandboxId: uniqueId('fork') }]), 'not_found');
      });
    });

    test('PTY: echoes input, resizes, reports exit', async () => {
      if (!provider.capabilities.pty) {
        const { instanceId } = await createSandbox();
        await expectProviderError(provider.openPty(instanceId, { cols: 80, rows: 24 }), 'unsupported');
        return;
      }
      const { instanceId } = await createSandbox();
      const pty = await provider.openPty(instanceId, { cols: 80, rows: 24, command: ['sh'] });
      const exited = new Promise<{ exitCode: number | null }>((resolve) => pty.onExit(resolve));
      pty.write('echo $((6*7))\r');
      await waitForPtyOutput(pty, (text) => text.includes('42'));
      pty.resize(100, 33);
      pty.write('stty size\r');
      await waitForPtyOutput(pty, (text) => text.includes('33 100'));
      pty.write('exit 5\r');
      expect((await exited).exitCode).toBe(5);
    });

    describe('custom images', () => {
      // Outside the workdir only where the sandbox has a root of its own.
      const toolDir = isolatedRoot ? '/opt/tool' : 'opt/tool';
      const toolPath = isolatedRoot ? '/opt/tool' : '/workspace/opt/tool';
      const supportsCapture = () => provider.capabilities.interactiveSetup && provider.capabilities.templateCapture;

      const startSetup = async (source: TemplateRef | null) => {
        const setupSessionId = uniqueId('setup');
        const lease = await provider.startInteractiveSetup({
          setupSessionId,
          environmentId: 'env-conformance',
          config: options.config,
          source,
          ttlSeconds: 600,
        });
        cleanup.push(() => provider.cancelInteractiveSetup(lease.leaseId));
        return { setupSessionId, lease };
      };

      const capture = async (setup: Awaited<ReturnType<typeof startSetup>>) => {
        const template = await provider.captureTemplate({
          leaseId: setup.lease.leaseId,
          setupSessionId: setup.setupSessionId,
          environmentId: 'env-conformance',
        });
        await provider.cancelInteractiveSetup(setup.lease.leaseId);
        if (provider.capabilities.templateDelete) cleanup.push(() => provider.deleteTemplate(template));
        return template;
      };

      test('without the capability, setup and capture are refused as unsupported', async (requires) => {
        requires(!supportsCapture(), 'it offers setup and capture, so there is no refusal to observe');
        if (!provider.capabilities.interactiveSetup) {
          await expectProviderError(
            provider.startInteractiveSetup({
              setupSessionId: 'x',
              environmentId: 'e',
              config: options.config,
              source: null,
              ttlSeconds: 60,
            }),
            'unsupported',
          );
        }
        await expectProviderError(provider.captureTemplate({ leaseId: 'x', setupSessionId: 'x', environmentId: 'e' }), 'unsupported');
      });

      test('setup → capture → a new sandbox boots from the capture with the setup files', async (requires) => {
        requires(supportsCapture(), 'no interactiveSetup + templateCapture capability');
        const setup = await startSetup(null);
        expect(provider.capabilities.interactiveSetupConnectionTypes).toContain(setup.lease.connection.type);
        expect((await provider.getInteractiveSetup(setup.lease.leaseId)).status).toBe('running');
        const wrote = await provider.exec(setup.lease.leaseId, {
          command: ['sh', '-c', `echo first > first.txt && mkdir -p ${toolDir} && echo v1 > ${toolDir}/version`],
        });
        expect(wrote.exitCode).toBe(0);
        if (provider.capabilities.changeTracking) {
          const changes = await provider.listChanges(setup.lease.leaseId);
          expect(changes).toContainEqual(expect.objectContaining({ path: `${toolPath}/version`, kind: 'added', type: 'file' }));
        }
        const template = await capture(setup);
        expect(template.kind).toBe(provider.capabilities.templateRefKind);
        expect(template.ref.length).toBeGreaterThan(0);
        expect((await provider.getInteractiveSetup(setup.lease.leaseId)).status).toBe('missing');

        const booted = await createSandbox(template);
        const read = await provider.exec(booted.instanceId, { command: ['sh', '-c', `cat first.txt ${toolDir}/version`] });
        expect(read.stdout).toBe('first\nv1\n');
      });

      test('refresh: a setup seeded from a capture keeps its files; the older capture stays bootable', async (requires) => {
        requires(supportsCapture(), 'no interactiveSetup + templateCapture capability');
        const first = await startSetup(null);
        await provider.exec(first.lease.leaseId, { command: ['sh', '-c', 'echo one > one.txt'] });
        const v1 = await capture(first);

        const second = await startSetup(v1);
        const seeded = await provider.exec(second.lease.leaseId, { command: ['cat', 'one.txt'] });
        expect(seeded.stdout).toBe('one\n');
        await provider.exec(second.lease.leaseId, { command: ['sh', '-c', 'echo two > two.txt'] });
        const v2 = await capture(second);

        const fromV2 = await createSandbox(v2);
        expect((await provider.exec(fromV2.instanceId, { command: ['sh', '-c', 'cat one.txt two.txt'] })).stdout).toBe('one\ntwo\n');
        const fromV1 = await createSandbox(v1);
        expect((await provider.exec(fromV1.instanceId, { command: ['sh', '-c', 'cat one.txt; test -e two.txt; echo $?'] })).stdout).toBe(
          'one\n1\n',
        );
      });

      test('cancel tears the setup sandbox down', async (requires) => {
        requires(provider.capabilities.interactiveSetup, 'no interactiveSetup capability');
        const setup = await startSetup(null);
        await provider.cancelInteractiveSetup(setup.lease.leaseId);
        expect((await provider.getInteractiveSetup(setup.lease.leaseId)).status).toBe('missing');
        expect((await provider.listInstances()).some((i) => i.instanceId === setup.lease.leaseId)).toBe(false);
        await provider.cancelInteractiveSetup(setup.lease.leaseId);
      });

      test('a setup sandbox is listed as a setup for garbage collection', async (requires) => {
        requires(provider.capabilities.interactiveSetup, 'no interactiveSetup capability');
        const setup = await startSetup(null);
        expect(await provider.listInstances()).toContainEqual({
          instanceId: setup.lease.leaseId,
          ownerId: setup.setupSessionId,
          ownerKind: 'setup',
        });
      });

      test('deleteTemplate removes the artefact: booting from it is not_found', async (requires) => {
        requires(supportsCapture(), 'no interactiveSetup + templateCapture capability');
        requires(provider.capabilities.templateDelete, 'no templateDelete capability');
        const setup = await startSetup(null);
        const template = await capture(setup);
        await provider.deleteTemplate(template);
        await expectProviderError(
          provider.create({ sandboxId: uniqueId('conf'), environmentId: 'env-conformance', config: options.config, template }),
          'not_found',
        );
      });
    });
  });
}
