import { z } from 'zod';

/**
 * Where a Docker Engine API listens, as an environment may name it: a unix socket path or URL,
 * or tcp on this machine's loopback. An environment editor cannot point the server at another
 * host; an operator who runs a remote engine sets DOCKER_HOST for the whole server instead.
 */
const dockerHostSchema = z
  .string()
  .trim()
  .regex(
    /^(\/|unix:\/\/\/|tcp:\/\/(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):\d{1,5}$)/,
    'use a socket path (/var/run/docker.sock), unix:///path or tcp://127.0.0.1:PORT; for a remote engine set DOCKER_HOST on the server',
  );

/** Environment config of the Docker provider, as the UI form shows it. */
/** What `image` is, in the words its errors use. */
const IMAGE_HINT = 'the Docker image to boot, e.g. debian:bookworm (docker images lists the local ones)';

export const dockerConfigSchema = z.strictObject({
  /** A local image name or id the sandboxes boot from, such as `debian:bookworm`. Part of the boot source. */
  image: z
    .string({
      error: (issue) => (issue.input === undefined ? `required — ${IMAGE_HINT}` : `must be a string — ${IMAGE_HINT}`),
    })
    .trim()
    .min(1, `must not be empty — ${IMAGE_HINT}`),
  /** CPU limit in cores (fractions allowed). Default: no limit. Runtime knob. */
  cpu: z.number().positive().max(256).optional(),
  /** Memory limit in MiB; swap is not added on top. Default: no limit. Runtime knob. */
  memoryMb: z.number().int().min(16).optional(),
  /**
   * Disk limit in MiB for what a sandbox writes on top of its image (its writable layer). Default
   * 10240. One file past it fails at once (EFBIG); a sandbox whose writes add up past it is stopped
   * within seconds, and says why (decision 0011). Runtime knob.
   */
  diskMb: z
    .number()
    .int()
    .min(16)
    .max(16 * 1024 * 1024)
    .optional(),
  /** Maximum number of processes in a sandbox. Default 1024. Runtime knob. */
  pidsLimit: z.number().int().min(8).max(1_000_000).optional(),
  /** Container network. Default `none`: loopback only. `bridge` and `host` need an operator's decision. */
  network: z.enum(['none', 'bridge', 'host']).default('none'),
  /** Environment variables set in every sandbox process. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
  /**
   * The engine for this environment. Default: the provider's engine (`DOCKER_HOST`, else
   * /var/run/docker.sock).
   */
  dockerHost: dockerHostSchema.optional(),
});

export type DockerConfig = z.infer<typeof dockerConfigSchema>;

/** Config fields that only tune the runtime; changing them keeps captured images valid. */
export const DOCKER_RUNTIME_KNOBS = ['cpu', 'memoryMb', 'diskMb', 'pidsLimit'] as const;

/** Default process limit: enough for compilers and test runners, low enough to stop a fork bomb. */
export const DEFAULT_PIDS_LIMIT = 1024;

/** Where every sandbox starts and where workspace export/import apply. */
export const WORKDIR = '/workspace';
