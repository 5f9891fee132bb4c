import { type TestContext, test } from 'vitest';
import { startTestServer, type TestServer } from '../../integration/support/harness.ts';

declare module 'vitest' {
  interface TaskMeta {
    /** Set on every test of the hostile suite: the attack it made and what the server answered. */
    hostile?: { serverErrors: number };
  }
}

/** Answers with status >= 500 seen by every hostile server in this worker, in order. */
const serverErrors: Array<{ method: string; url: string; status: number }> = [];

/**
 * A server for attacks: the integration harness's, plus a count of every 5xx it answers. An
 * attack that provokes one fails, whatever else it asserted.
 */
export async function startHostileServer(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  return startTestServer({
    ...options,
    beforeListen: (app) => {
      app.addHook('onResponse', async (request, reply) => {
        if (reply.statusCode >= 500) serverErrors.push({ method: request.method, url: request.url.slice(0, 200), status: reply.statusCode });
      });
      options.beforeListen?.(app);
    },
  });
}

/**
 * One attack of the hostile suite: a test that passes when the attack was contained. The suite's
 * reporter prints how many were tried, how many were contained and how many 5xx answers were seen
 * (which must be none: a 5xx fails the attack).
 */
export function attack(name: string, fn: (ctx: TestContext) => Promise<void> | void, timeout?: number): void {
  test(name, async (ctx) => {
    const before = serverErrors.length;
    try {
      await fn(ctx);
    } finally {
      const seen = serverErrors.slice(before);
      ctx.task.meta.hostile = { serverErrors: seen.length };
      if (seen.length > 0) {
        throw new Error(`the server answered 5xx during this attack: ${seen.map((e) => `${e.status} ${e.method} ${e.url}`).join('; ')}`);
      }
    }
  }, timeout);
}
