import { createHash } from 'node:crypto';
import type { CaptureRequest, TemplateRef } from '@sandcast/provider-sdk';
import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import type { CaptureGate } from './capture-gate.ts';
import { type EnginePool, formatInstanceId, PROVIDER_ID, statusOf, toProviderError, withDeadline } from './connection.ts';
import { type ContainerHandle, handleFor } from './containers.ts';
import { driveFreezer, type Freezer, findFreezer, freezerState } from './freezer.ts';
import { captureComment, imageLabels, LABEL } from './labels.ts';

/**
 * Throughput assumed when estimating commit progress. The engine reports nothing while it
 * commits, so the fraction is an estimate from the writable layer's size, capped below 1 until
 * the commit returns.
 */
const ASSUMED_COMMIT_BYTES_PER_SECOND = 150 * 1024 * 1024;
const PROGRESS_INTERVAL_MS = 500;

/** A Docker repository component: lowercase alphanumerics separated by single . _ or -. */
export function repositoryFor(environmentId: string): string {
  const name = environmentId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return `sandcast/${name || 'environment'}`;
}

/**
 * A short, tag-safe form of a setup session id: the first 12 hex digits of a UUID, otherwise the
 * sanitised id (hashed when long). Unique per session, so a capture never moves another's tag.
 */
export function shortSessionId(setupSessionId: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(setupSessionId)) return setupSessionId.replace(/-/g, '').slice(0, 12).toLowerCase();
  const clean = setupSessionId.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[.-]+/, '');
  if (clean.length > 0 && clean.length <= 40) return clean;
  return `${clean.slice(0, 27)}-${createHash('sha256').update(setupSessionId).digest('hex').slice(0, 12)}`;
}

async function imageIdOf(docker: Docker, ref: string): Promise<string | null> {
  try {
    return (await docker.getImage(ref).inspect()).Id;
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw error;
  }
}

interface CommitReply {
  Id: string;
}

/** Deadlines of a capture's engine calls; tests shorten them. */
export interface CaptureDeadlines {
  /** inspect, pause, unpause. */
  callMs: number;
  /** The commit itself, at least; a large writable layer gets more (see commitDeadlineMs). */
  commitMinMs: number;
  /** Reaching THAWED (or FROZEN) once the freezer is written. */
  freezerMs: number;
}

export const DEFAULT_CAPTURE_DEADLINES: CaptureDeadlines = { callMs: 15_000, commitMinMs: 180_000, freezerMs: 5_000 };

/** The commit's deadline: generous for the layer's size (20 MiB/s, far below a disk's speed). */
function commitDeadlineMs(changedBytes: number, deadlines: CaptureDeadlines): number {
  return Math.max(deadlines.commitMinMs, Math.ceil(changedBytes / (20 * 1024 * 1024)) * 1_000);
}

const isLocalEngine = (engineUrl: string) => engineUrl.startsWith('unix://');

/**
 * Ends a capture's pause whatever state the engine is in (decision 0011). First the engine's own
 * unpause, under a deadline. When that does not answer, or the cgroup is still frozen after it,
 * the watchdog thaws the container through its cgroup freezer — which also lets a half-started
 * exec finish and un-wedges the engine — and then brings the engine's view back in step (freeze
 * again and let the engine unpause, so it records the container as running).
 * Returns how the pause ended; throws only when the container may still be frozen.
 */
export async function releasePause(
  handle: ContainerHandle,
  freezer: Freezer | null,
  deadlines: CaptureDeadlines = DEFAULT_CAPTURE_DEADLINES,
): Promise<'unpaused' | 'thawed'> {
  const { container, engineUrl } = handle;
  let engineError: unknown = null;
  try {
    await withDeadline(container.unpause(), deadlines.callMs, { action: 'unpause the setup container after the commit', engineUrl });
  } catch (error) {
    engineError = error;
  }
  if (!freezer) {
    // The engine says it is not paused (409): nothing is frozen.
    if (engineError === null || statusOf(engineError) === 409) return 'unpaused';
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'timeout',
      retryable: false,
      message: `the setup container ${handle.instanceId.slice(0, 12)} may still be paused: ${(engineError as Error).message}; run \`docker unpause\` on it, or cancel the setup`,
      cause: engineError,
    });
  }
  if (engineError === null && (await freezerState(freezer)) === 'THAWED') return 'unpaused';
  await driveFreezer(freezer, 'THAWED', deadlines.freezerMs);
  // The engine answers again once the stuck exec could finish; make it record the container as running.
  const info = await withDeadline(container.inspect(), deadlines.callMs, { action: 'inspect the setup container after a thaw', engineUrl });
  if (info.State.Paused) {
    await driveFreezer(freezer, 'FROZEN', deadlines.freezerMs);
    try {
      await withDeadline(container.unpause(), deadlines.callMs, { action: 'unpause the setup container after a thaw', engineUrl });
    } finally {
      // Whatever the engine did, the container must not stay frozen.
      await driveFreezer(freezer, 'THAWED', deadlines.freezerMs);
    }
  }
  return 'thawed';
}

/**
 * `docker commit` of a setup container into `sandcast/<environment>:<short-session-id>`. The
 * container is paused for the commit so the filesystem is consistent (a file written while the
 * engine reads the layer is otherwise torn, or fails the commit); its processes are not part of
 * the image. No exec starts during the pause (the capture gate), and the pause always ends
 * (releasePause). The image keeps the base image's entrypoint and command, so an operator can
 * `docker run` it like the base. It is labelled with the installation and the setup session, so
 * a capture the server never recorded is found and removed later (listCapturedImages).
 */
export async function captureImage(
  handle: ContainerHandle,
  request: CaptureRequest & { installation: string },
  deadlines: CaptureDeadlines = DEFAULT_CAPTURE_DEADLINES,
): Promise<TemplateRef> {
  if (!handle.gate) return commitAndTag(handle, request, deadlines);
  return handle.gate.capture(handle.container.id, () => commitAndTag(handle, request, deadlines));
}

async function commitAndTag(
  handle: ContainerHandle,
  request: CaptureRequest & { installation: string },
  deadlines: CaptureDeadlines,
): Promise<TemplateRef> {
  const { docker, container, engineUrl } = handle;
  const report = (phase: string, fraction?: number) => {
    try {
      request.onProgress?.({ phase, fraction });
    } catch {
      // A progress listener's failure must not fail the capture.
    }
  };
  report('inspecting', 0);
  let info: Docker.ContainerInspectInfo & { SizeRw?: number };
  try {
    // `size` makes the engine measure the writable layer (SizeRw); the typings do not know it.
    const withSize = { size: true } as Docker.ContainerInspectOptions;
    info = await withDeadline(container.inspect(withSize), deadlines.callMs, { action: 'inspect the setup container', engineUrl });
  } catch (error) {
    throw toProviderError(error, {
      action: 'capture the setup sandbox',
      what: `setup container ${handle.instanceId.slice(0, 12)}`,
      engineUrl,
    });
  }
  if (!info.State.Running) {
    const reason = await handle.stoppedReason?.().catch(() => undefined);
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'capture_failed',
      message: `capture failed: the setup container is not running (${reason ?? (info.State.Paused ? 'it is paused' : `it exited with code ${info.State.ExitCode}`)}); start a new setup`,
    });
  }
  const changedBytes = info.SizeRw ?? 0;
  const source = await docker
    .getImage(info.Image)
    .inspect()
    .catch(() => null);
  const freezer = isLocalEngine(engineUrl) ? await findFreezer(info.State.Pid, info.Id) : null;

  const estimateMs = Math.max(1_000, (changedBytes / ASSUMED_COMMIT_BYTES_PER_SECOND) * 1_000);
  const started = Date.now();
  report('pausing', 0.03);
  try {
    await withDeadline(container.pause(), deadlines.callMs, { action: 'pause the setup container', engineUrl });
  } catch (error) {
    await releasePause(handle, freezer, deadlines).catch(() => undefined);
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'capture_failed',
      retryable: true,
      message: `capture failed: ${toProviderError(error, { action: 'pause the setup container', engineUrl }).message}`,
      cause: error,
    });
  }
  report('committing', 0.05);
  const ticker = setInterval(
    () => report('committing', Math.min(0.9, 0.05 + (0.85 * (Date.now() - started)) / estimateMs)),
    PROGRESS_INTERVAL_MS,
  );
  let imageId: string;
  let commitError: unknown = null;
  try {
    // dockerode sends the same object as query and body unless told apart.
    const reply = (await withDeadline(
      container.commit({
        _query: {
          container: container.id,
          // Paused above, and thawed below whatever happens.
          pause: false,
          comment: captureComment(request.setupSessionId),
        },
        _body: {
          Labels: imageLabels({ ...request, installation: request.installation }),
          Entrypoint: source?.Config?.Entrypoint ?? [],
          Cmd: source?.Config?.Cmd ?? null,
          Env: info.Config.Env,
          WorkingDir: info.Config.WorkingDir,
        },
      }),
      commitDeadlineMs(changedBytes, deadlines),
      { action: 'commit the setup container', engineUrl },
    )) as CommitReply;
    imageId = reply.Id;
  } catch (error) {
    commitError = error;
    imageId = '';
  } finally {
    clearInterval(ticker);
  }
  report('resuming', 0.91);
  try {
    await releasePause(handle, freezer, deadlines);
  } catch (error) {
    // The image, if the commit made one, is left for garbage collection: it is labelled as a capture.
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'capture_failed',
      message: `capture failed: ${(error as Error).message}`,
      cause: error,
    });
  }
  if (commitError !== null) {
    const cause = toProviderError(commitError, { action: 'commit the setup sandbox', engineUrl });
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: cause.code === 'not_found' ? 'not_found' : 'capture_failed',
      retryable: cause.retryable,
      message: `capture failed: ${cause.message}`,
      cause: commitError,
    });
  }

  report('tagging', 0.92);
  const repo = repositoryFor(request.environmentId);
  let tag = shortSessionId(request.setupSessionId);
  try {
    const existing = await imageIdOf(docker, `${repo}:${tag}`);
    // Never move a tag another capture owns: add the image id instead.
    if (existing !== null && existing !== imageId) tag = `${tag.slice(0, 100)}-${imageId.replace(/^sha256:/, '').slice(0, 12)}`;
    await docker.getImage(imageId).tag({ repo, tag });
  } catch (error) {
    await docker
      .getImage(imageId)
      .remove()
      .catch(() => undefined);
    const cause = toProviderError(error, { action: `tag the captured image as ${repo}:${tag}`, engineUrl });
    throw new ProviderError({ provider: PROVIDER_ID, code: 'capture_failed', message: `capture failed: ${cause.message}`, cause: error });
  }

  report('measuring', 0.96);
  const ref = `${repo}:${tag}`;
  const image = await docker
    .getImage(imageId)
    .inspect()
    .catch(() => null);
  const sizeBytes = image?.Size;
  const layerBytes = sizeBytes !== undefined && source?.Size !== undefined ? Math.max(0, sizeBytes - source.Size) : undefined;
  report('done', 1);
  return {
    kind: 'image',
    ref,
    digest: imageId,
    sizeBytes,
    metadata: {
      engine: engineUrl,
      baseImageId: source?.Id ?? info.Image,
      layerBytes,
      changedBytes,
      commitMs: Date.now() - started,
    },
  };
}

/** Containers (running or not) whose image is `imageId`. */
async function containersUsing(docker: Docker, imageId: string): Promise<Docker.ContainerInfo[]> {
  const all = await docker.listContainers({ all: true });
  return all.filter((c) => c.ImageID === imageId);
}

/**
 * Removes a captured image's name, and with it the image when nothing else refers to it. Refused
 * with `in_use` while a container runs from it; an image already gone is fine.
 */
export async function deleteImage(pool: EnginePool, template: TemplateRef): Promise<void> {
  if (template.kind !== 'image') {
    throw new ProviderError({ provider: PROVIDER_ID, code: 'invalid_config', message: `not a Docker image template: ${template.kind}` });
  }
  const engineUrl = typeof template.metadata?.engine === 'string' ? pool.register(template.metadata.engine) : pool.defaultAddress.url;
  const docker = pool.client(engineUrl);
  try {
    const imageId = await imageIdOf(docker, template.ref);
    if (imageId === null) return;
    const users = await containersUsing(docker, imageId);
    if (users.length > 0) {
      const owners = users.map(
        (c) => c.Labels?.[LABEL.sandbox] || c.Labels?.[LABEL.setup] || c.Names?.[0]?.replace(/^\//, '') || c.Id.slice(0, 12),
      );
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'in_use',
        message: `image ${template.ref} is still used by ${users.length} container(s) (${owners.slice(0, 5).join(', ')}${users.length > 5 ? ', …' : ''}); destroy those sandboxes first, then delete the image`,
      });
    }
    await docker.getImage(template.ref).remove({ noprune: false });
  } catch (error) {
    if (statusOf(error) === 404) return;
    if (statusOf(error) === 409) {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'in_use',
        message: `image ${template.ref} is still in use: ${(error as { json?: { message?: string } }).json?.message ?? String(error)}; destroy the sandboxes that use it first`,
        cause: error,
      });
    }
    throw toProviderError(error, { action: `delete image ${template.ref}`, engineUrl });
  }
}

/**
 * Ends the pause of every container of this installation that a capture left paused: a server
 * killed during a capture (kill -9, a crash) never ran its own releasePause. Sandcast pauses a
 * container only to capture it, so a paused one that this process is not capturing is such a
 * leftover. Runs on the provider's upkeep timer.
 */
export async function releaseLeftoverPauses(pool: EnginePool, installation: string, gate: CaptureGate): Promise<string[]> {
  const released: string[] = [];
  for (const url of pool.urls()) {
    const docker = pool.client(url);
    const paused = await withDeadline(
      docker.listContainers({ filters: { status: ['paused'], label: [`${LABEL.managed}=true`, `${LABEL.installation}=${installation}`] } }),
      DEFAULT_CAPTURE_DEADLINES.callMs,
      { action: 'list paused containers', engineUrl: url },
    ).catch(() => [] as Docker.ContainerInfo[]);
    for (const info of paused) {
      if (gate.isCapturing(info.Id)) continue;
      const handle = handleFor(pool, formatInstanceId(info.Id, url, pool));
      const details = await withDeadline(handle.container.inspect(), DEFAULT_CAPTURE_DEADLINES.callMs, {
        action: 'inspect a paused container',
        engineUrl: url,
      }).catch(() => null);
      const freezer = details && isLocalEngine(url) ? await findFreezer(details.State.Pid, details.Id) : null;
      if (
        await releasePause(handle, freezer).then(
          () => true,
          () => false,
        )
      )
        released.push(handle.instanceId);
    }
  }
  return released;
}
