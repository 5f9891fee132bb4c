import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { type ExecChunk, isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesProvider } from './kubernetes-provider.ts';
import { type FakeKubernetes, fakeClusterSkipReason, type KubeObject, startFakeKubernetes, TEST_IMAGE } from './testing/index.ts';

const skip = await fakeClusterSkipReason();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the Kubernetes provider tests cannot run: ${skip}`);
if (skip) console.warn(`[kubernetes] skipped: ${skip}`);
const suite = skip ? describe.skip : describe;

const config = { image: TEST_IMAGE, cpu: 0.5, memoryMb: 256, runtimeClassName: 'gvisor', env: { GREETING: 'hello there' } };

function providerFor(fake: FakeKubernetes, extra: { capture?: boolean; installationId?: string } = {}): SandboxProvider {
  return createKubernetesProvider({
    access: { kubeconfig: fake.kubeconfig },
    namespace: fake.namespace,
    installationId: extra.installationId ?? 'unit',
    pollIntervalMs: 25,
    ...(extra.capture
      ? { capture: { registry: 'registry.sandcast.test/unit', committerImage: 'sandcast/committer:test', pushSecretName: 'push' } }
      : {}),
  });
}

const createdOf = (fake: FakeKubernetes, kind: string) => fake.created.filter((o) => o.kind === kind);
const podSpec = (object: KubeObject) => object.spec as Record<string, unknown> & { containers: Array<Record<string, unknown>> };

type PodSpecShape = Record<string, unknown> & { containers: Array<Record<string, unknown>> };
function jobPodSpec(job: KubeObject | undefined): PodSpecShape {
  if (!job) throw new Error('expected a Job');
  return (job.spec as { template: { spec: PodSpecShape } }).template.spec;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

suite('kubernetes provider against the fake API server (pods)', () => {
  let fake: FakeKubernetes;
  let provider: SandboxProvider;
  beforeAll(async () => {
    fake = await startFakeKubernetes();
    provider = providerFor(fake);
  });
  afterAll(async () => {
    const unhandled = [...fake.unhandled];
    await fake.close();
    // The stray calls below are the only ones the fake may have refused.
    expect(unhandled).toEqual(['GET /api/v1/namespaces/sandcast-test/services']);
  });

  it('runs a locked-down pod behind a deny-all network policy, labelled for garbage collection', async () => {
    const { instanceId } = await provider.create({ sandboxId: 'sbx-1', environmentId: 'env-1', config });
    const pod = createdOf(fake, 'Pod').find((p) => p.metadata.name === instanceId);
    expect(pod).toBeDefined();
    const spec = podSpec(pod as KubeObject);
    expect(spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      runtimeClassName: 'gvisor',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
    });
    expect(spec.containers[0]).toMatchObject({
      image: TEST_IMAGE,
      resources: { limits: { cpu: '0.5', memory: '256Mi' }, requests: { cpu: '0.5', memory: '256Mi' } },
      securityContext: {
        privileged: false,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      },
    });
    expect(pod?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'sandcast', 'sandcast.dev/installation': 'unit' });
    expect(pod?.metadata.annotations).toMatchObject({ 'sandcast.dev/owner-id': 'sbx-1', 'sandcast.dev/environment-id': 'env-1' });

    const policy = createdOf(fake, 'NetworkPolicy').find((p) => p.metadata.name === instanceId);
    expect(policy?.spec).toEqual({
      podSelector: { matchLabels: { 'sandcast.dev/instance': instanceId } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [],
    });
    // The policy exists before the pod does.
    const order = fake.calls.filter((c) => c.method === 'POST').map((c) => c.path);
    expect(order.indexOf(`/apis/networking.k8s.io/v1/namespaces/sandcast-test/networkpolicies`)).toBeLessThan(
      order.indexOf('/api/v1/namespaces/sandcast-test/pods'),
    );

    // Creation waited on a watch of that one pod, not on a loop of reads alone.
    const watched = `/api/v1/namespaces/sandcast-test/pods?watch=true&fieldSelector=metadata.name%3D${instanceId}`;
    expect(fake.calls).toContainEqual({ method: 'GET', path: watched });

    // The capabilities are really gone: root cannot chown a file it does not own.
    const chown = await provider.exec(instanceId, { command: ['sh', '-c', 'touch f && chown 1234 f'] });
    expect(chown.exitCode).not.toBe(0);
    expect((await provider.exec(instanceId, { command: ['sh', '-c', 'printf %s "$GREETING"'] })).stdout).toBe('hello there');
    await provider.destroy(instanceId);
    expect(fake.cluster.get('NetworkPolicy', fake.namespace, instanceId)).toBeUndefined();
  });

  it('runs as the configured non-root user', async () => {
    const { instanceId } = await provider.create({
      sandboxId: 'sbx-2',
      environmentId: 'env-1',
      config: { image: TEST_IMAGE, runAsUser: 4321 },
    });
    const spec = podSpec(createdOf(fake, 'Pod').find((p) => p.metadata.name === instanceId) as KubeObject);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 4321 });
    expect((await provider.exec(instanceId, { command: ['id', '-u'], cwd: '/' })).stdout).toBe('4321\n');
    await provider.destroy(instanceId);
  });

  it('holds a command at its next write while its output is not read', async () => {
    const { instanceId } = await provider.create({ sandboxId: 'sbx-3', environmentId: 'env-1', config: { image: TEST_IMAGE } });
    // 512 chunks of 64 KiB (32 MiB) if nothing held it back; it counts what it wrote.
    const running = await provider.execStream(instanceId, {
      command: ['sh', '-c', 'i=0; while [ $i -lt 512 ]; do head -c 65536 /dev/zero; i=$((i+1)); echo $i > /tmp/count; done'],
      cwd: '/',
    });
    const count = async () => Number((await provider.exec(instanceId, { command: ['cat', '/tmp/count'], cwd: '/' })).stdout.trim() || 0);
    // Wait until the writer is stuck (its count stops moving), then check it is stuck early.
    let previous = -1;
    let current = await count();
    while (current !== previous) {
      previous = current;
      await new Promise((resolve) => setTimeout(resolve, 300));
      current = await count();
    }
    expect(current).toBeLessThan(512);
    let bytes = 0;
    for await (const chunk of running.output as AsyncIterable<ExecChunk>) bytes += chunk.data.length;
    expect(bytes).toBe(512 * 65536);
    expect(await running.exit).toEqual({ exitCode: 0, timedOut: false });
    await provider.destroy(instanceId);
  });

  it('without a registry, capture is not offered and refused as unsupported', async () => {
    expect(provider.capabilities).toMatchObject({ templateCapture: false, templateRefKind: null, templateDelete: false, stopStart: false });
    const error = await errorOf(provider.captureTemplate({ leaseId: 'x', setupSessionId: 's', environmentId: 'e' }));
    expect(isProviderError(error) && error.code).toBe('unsupported');
    const setup = await errorOf(
      provider.startInteractiveSetup({
        setupSessionId: 's',
        environmentId: 'e',
        config: { image: TEST_IMAGE },
        source: null,
        ttlSeconds: 60,
      }),
    );
    expect(isProviderError(setup) && setup.code).toBe('unsupported');
    expect(provider.capabilities.interactiveSetup).toBe(false);
  });

  it('is unavailable, with the reason, when the API server refuses the credentials or is gone', async () => {
    const wrongToken = createKubernetesProvider({
      access: { kubeconfig: fake.kubeconfig.replace(/token: \S+/, 'token: not-the-token') },
      namespace: fake.namespace,
      installationId: 'unit',
    });
    const refused = await wrongToken.availability();
    expect(refused.available).toBe(false);
    expect(!refused.available && refused.reason).toMatch(/refused.*grant the role in docs\/deploy\/kubernetes\.md/);
    const gone = createKubernetesProvider({
      access: { kubeconfig: fake.kubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1') },
      namespace: fake.namespace,
      installationId: 'unit',
    });
    const unreachable = await gone.availability();
    expect(!unreachable.available && unreachable.reason).toMatch(/could not reach the cluster at https:\/\/127\.0\.0\.1:1/);
  });

  it('an unknown image is invalid_config and leaves nothing behind', async () => {
    const error = await errorOf(
      provider.create({ sandboxId: 'sbx-4', environmentId: 'env-1', config: { image: 'sandcast-test/absent:nope' } }),
    );
    expect(isProviderError(error) && error.code).toBe('invalid_config');
    expect((await provider.listInstances()).some((i) => i.ownerId === 'sbx-4')).toBe(false);
    expect(fake.cluster.list('NetworkPolicy', fake.namespace, {})).toEqual([]);
  });

  it('the fake refuses calls it does not implement, and callers without the token', async () => {
    const [certificateAuthority] = /certificate-authority-data: (\S+)/.exec(fake.kubeconfig)?.slice(1) ?? [];
    const get = (path: string, token: string | null) =>
      new Promise<number>((resolve, reject) => {
        const req = httpsRequest(`${fake.url}${path}`, {
          ca: Buffer.from(certificateAuthority ?? '', 'base64'),
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    const token = /token: (\S+)/.exec(fake.kubeconfig)?.[1] ?? '';
    expect(await get('/api/v1/namespaces/sandcast-test/pods', null)).toBe(401);
    expect(await get('/api/v1/namespaces/sandcast-test/services', token)).toBe(501);
  });
});

suite('kubernetes provider against the fake API server (exec over v4, agent-sandbox, committer Job)', () => {
  let fake: FakeKubernetes;
  let provider: SandboxProvider;
  beforeAll(async () => {
    fake = await startFakeKubernetes({ agentSandbox: true, execProtocols: ['v4.channel.k8s.io'] });
    provider = providerFor(fake, { capture: true, installationId: 'unit-v4' });
  });
  afterAll(async () => {
    const unhandled = [...fake.unhandled];
    await fake.close();
    expect(unhandled).toEqual([]);
  });

  it('falls back to v4: stdin still ends, workspace imports still unpack', async () => {
    const { instanceId } = await provider.create({ sandboxId: 'sbx-v4', environmentId: 'env-2', config: { image: TEST_IMAGE } });
    expect(instanceId).toMatch(/^sandcast-sbx-/);
    expect(createdOf(fake, 'Sandbox')).toHaveLength(1);
    expect((await provider.exec(instanceId, { command: ['wc', '-c'], stdin: 'twelve bytes' })).stdout.trim()).toBe('12');
    await provider.writeFile(instanceId, '/workspace/a/b.txt', Buffer.from('bee'));
    const tar = await provider.exportWorkspace(instanceId);
    const chunks: Buffer[] = [];
    for await (const chunk of tar) chunks.push(chunk as Buffer);
    await provider.importWorkspace(instanceId, Readable.from([Buffer.concat(chunks)]), '/tmp/copy');
    expect((await provider.readFile(instanceId, '/tmp/copy/a/b.txt')).toString()).toBe('bee');
    expect(new Set(fake.execProtocolsUsed)).toEqual(new Set(['v4.channel.k8s.io']));
    await provider.destroy(instanceId);
    expect(fake.cluster.get('Pod', fake.namespace, instanceId)).toBeUndefined();
  });

  it('a read-only root keeps /workspace (seeded from the capture) and /tmp writable', async () => {
    const readOnly = { image: TEST_IMAGE, readOnlyRootFilesystem: true };
    const lease = await provider.startInteractiveSetup({
      setupSessionId: 'setup-ro',
      environmentId: 'env-ro',
      config: readOnly,
      source: null,
      ttlSeconds: 900,
    });
    // The setup keeps a writable root: its capture commits it.
    expect(
      (await provider.exec(lease.leaseId, { command: ['sh', '-c', 'echo seeded > seeded.txt && touch /etc/setup-was-here'] })).exitCode,
    ).toBe(0);
    const template = await provider.captureTemplate({ leaseId: lease.leaseId, setupSessionId: 'setup-ro', environmentId: 'env-ro' });
    await provider.cancelInteractiveSetup(lease.leaseId);

    const { instanceId } = await provider.create({ sandboxId: 'sbx-ro', environmentId: 'env-ro', config: readOnly, template });
    const sandbox = createdOf(fake, 'Sandbox').find((s) => s.metadata.name === instanceId);
    if (!sandbox) throw new Error('expected a Sandbox');
    const spec = (sandbox.spec as { podTemplate: { spec: PodSpecShape } }).podTemplate.spec;
    expect(spec.containers[0]?.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect(spec.initContainers).toHaveLength(1);
    const seen = await provider.exec(instanceId, {
      command: [
        'sh',
        '-c',
        'cat seeded.txt; test -e /etc/setup-was-here && echo committed; touch /etc/nope 2>/dev/null || echo read-only; touch /tmp/t new.txt && echo writable',
      ],
    });
    expect(seen.stdout).toBe('seeded\ncommitted\nread-only\nwritable\n');
    await provider.destroy(instanceId);
    await provider.deleteTemplate(template);
  });

  it('commits on the setup pod’s node with a privileged Job, and deletes with an unprivileged one', async () => {
    const lease = await provider.startInteractiveSetup({
      setupSessionId: 'setup-1',
      environmentId: 'env-2',
      config: { image: TEST_IMAGE },
      source: null,
      ttlSeconds: 900,
    });
    const sandbox = createdOf(fake, 'Sandbox').find((s) => s.metadata.name === lease.leaseId);
    expect(sandbox?.spec).toMatchObject({ shutdownPolicy: 'Delete' });
    const template = await provider.captureTemplate({ leaseId: lease.leaseId, setupSessionId: 'setup-1', environmentId: 'env-2' });
    expect(template).toMatchObject({ kind: 'image', ref: 'registry.sandcast.test/unit/env-env-2:setup-1' });
    await provider.cancelInteractiveSetup(lease.leaseId);
    await provider.deleteTemplate(template);
    const [commit, remove] = createdOf(fake, 'Job').slice(-2);
    const commitSpec = jobPodSpec(commit);
    expect(commitSpec).toMatchObject({ nodeName: 'fake-node-1', automountServiceAccountToken: false, restartPolicy: 'Never' });
    expect(commitSpec.containers[0]?.securityContext).toEqual({ privileged: true });
    expect(commitSpec.volumes).toContainEqual({ name: 'runtime', hostPath: { path: '/run/containerd/containerd.sock', type: 'Socket' } });
    expect(commitSpec.volumes).toContainEqual(
      expect.objectContaining({ name: 'registry', secret: expect.objectContaining({ secretName: 'push' }) }),
    );
    const removeSpec = jobPodSpec(remove);
    expect(removeSpec.nodeName).toBeUndefined();
    expect(removeSpec.containers[0]?.securityContext).toMatchObject({ allowPrivilegeEscalation: false });
    // Both Jobs are removed once they finished.
    expect(fake.cluster.list('Job', fake.namespace, {})).toEqual([]);
  });
});
