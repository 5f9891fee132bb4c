import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    // Safety nets, not budgets: a test that spawns the CLI a dozen times on a loaded 2-core machine
    // can take a minute. Speed is measured in bench/, never asserted here.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ['default', './scripts/count-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['packages/**/*.test.ts', 'apps/**/*.test.ts', 'tests/integration/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'apps/web/**'],
        },
      },
      {
        // Attacks that must be contained (tests/hostile/README.md).
        extends: true,
        test: {
          name: 'hostile',
          include: ['tests/hostile/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        // The web UI's component tests, in a DOM.
        extends: true,
        test: {
          name: 'web',
          include: ['apps/web/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['apps/web/src/test/setup.ts'],
        },
      },
      {
        // The built UI in Chromium against a real server (tests/e2e/README.md).
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.e2e.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
