import { z } from 'zod';

/** Name of the built-in base image: the host's own /usr under a generated skeleton. */
export const BUILTIN_IMAGE = 'host';

/** Environment config of the `local` provider. */
export const localConfigSchema = z.strictObject({
  /** Base image name or id from the local image store. Default: the built-in `host` base (no download). */
  image: z.string().min(1).default(BUILTIN_IMAGE),
  /** CPU limit in cores (fractions allowed). Default 1. */
  cpu: z.number().positive().max(256).default(1),
  /** Memory limit in MiB. Default 1024. */
  memoryMb: z.number().int().min(16).max(1_048_576).default(1024),
  /**
   * Disk the sandbox may write, in MiB: its changes to the image live on a filesystem of this size
   * (a sparse file, so unused space costs nothing). Writing past it fails with ENOSPC. Default 10240.
   */
  diskMb: z.number().int().min(16).max(1_048_576).default(10_240),
  /** Maximum number of processes and threads. Default 512. */
  pidsLimit: z.number().int().min(8).max(1_000_000).default(512),
  /** `none`: loopback only (default). `host`: the host's network stack. */
  network: z.enum(['none', 'host']).default('none'),
  /** Extra environment variables for every command. Default none. */
  env: z.record(z.string(), z.string()).default({}),
  /** Working directory of commands, created on start. Absolute, no `..` segment, no NUL. Default /workspace. */
  workdir: z
    .string()
    .regex(/^\/[^\0]*$/, 'must be an absolute path without NUL bytes, such as /workspace')
    .refine(
      (path) => !path.split('/').includes('..'),
      'must not contain ".." segments; give the directory as an absolute path such as /workspace/app',
    )
    .default('/workspace'),
});

export type LocalConfig = z.infer<typeof localConfigSchema>;

/** Fields that tune the runtime only; changing them does not change what an image was built from. */
export const LOCAL_RUNTIME_KNOBS = ['cpu', 'memoryMb', 'diskMb', 'pidsLimit'] as const;
