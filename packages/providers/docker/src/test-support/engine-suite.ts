import { beforeAll, type TestContext } from 'vitest';
import { dockerSkipReason } from './test-engine.ts';

/**
 * Prepares the engine and the base image once for a test file. Each test calls `need(ctx)` first:
 * it skips with the reason on a machine without Docker, and the file fails under `CI=true`.
 */
export function useDockerEngine(): { need(ctx: TestContext): void } {
  let skip: string | null = 'the engine was not prepared';
  beforeAll(async () => {
    skip = await dockerSkipReason();
    if (skip && process.env.CI === 'true') throw new Error(`CI=true but the Docker tests cannot run: ${skip}`);
    if (skip) console.warn(`[docker] skipped: ${skip}`);
  }, 600_000);
  return {
    need(ctx) {
      if (skip) ctx.skip(skip);
    },
  };
}
