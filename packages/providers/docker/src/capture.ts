import { createHash } from 'node:crypto';
import type { CaptureRequest, TemplateRef } from '@sandcast/provider-sdk';
import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { type EnginePool, PROVIDER_ID, statusOf, toProviderError } from './connection.ts';
import type { ContainerHandle } from './containers.ts';
import { imageLabels, LABEL } from './labels.ts';

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

/**
 * `docker commit` of a setup container into `sandcast/<environment>:<short-session-id>`. The
 * container is paused for the commit so the filesystem is consistent; its processes are not part
 * of the image. The image keeps the base image's entrypoint and command, so an operator can
 * `docker run` it like the base.
 */
export async function captureImage(handle: ContainerHandle, request: CaptureRequest): Promise<TemplateRef> {
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
    info = await container.inspect(withSize);
  } catch (error) {
    throw toProviderError(error, {
      action: 'capture the setup sandbox',
      what: `setup container ${handle.instanceId.slice(0, 12)}`,
      engineUrl,
    });
  }
  const changedBytes = info.SizeRw ?? 0;
  const source = await docker
    .getImage(info.Image)
    .inspect()
    .catch(() => null);

  const estimateMs = Math.max(1_000, (changedBytes / ASSUMED_COMMIT_BYTES_PER_SECOND) * 1_000);
  const started = Date.now();
  report('committing', 0.05);
  const ticker = setInterval(
    () => report('committing', Math.min(0.9, 0.05 + (0.85 * (Date.now() - started)) / estimateMs)),
    PROGRESS_INTERVAL_MS,
  );
  let imageId: string;
  try {
    // dockerode sends the same object as query and body unless told apart.
    const reply = (await container.commit({
      _query: {
        container: container.id,
        // Not paused: on cgroup v1 hosts the engine's freeze for a commit was seen to stick
        // (container FROZEN, every later call on it hanging). The operator has clicked Finished,
        // so nothing should still be writing; a write racing the commit may be missed.
        pause: false,
        comment: `Sandcast capture of setup session ${request.setupSessionId}`,
      },
      _body: {
        Labels: imageLabels(request),
        Entrypoint: source?.Config?.Entrypoint ?? [],
        Cmd: source?.Config?.Cmd ?? null,
        Env: info.Config.Env,
        WorkingDir: info.Config.WorkingDir,
      },
    })) as CommitReply;
    imageId = reply.Id;
  } catch (error) {
    const cause = toProviderError(error, { action: 'commit the setup sandbox', engineUrl });
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: cause.code === 'not_found' ? 'not_found' : 'capture_failed',
      retryable: cause.retryable,
      message: `capture failed: ${cause.message}`,
      cause: error,
    });
  } finally {
    clearInterval(ticker);
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
