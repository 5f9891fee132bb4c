import type { Reporter, TestCase, TestModule } from 'vitest/node';

/**
 * Prints, after the run, how many tests ran against each database (tests tagged `[pglite]` or
 * `[postgres]` in their name) and a closing `N passed, N failed, N skipped` line.
 */
export default class CountReporter implements Reporter {
  private counts = { passed: 0, failed: 0, skipped: 0 };
  private byDatabase = new Map<string, { passed: number; failed: number; skipped: number }>();
  private hostile = { tried: 0, contained: 0, serverErrors: 0 };

  onTestCaseResult(test: TestCase): void {
    const state = test.result().state;
    const key = state === 'passed' ? 'passed' : state === 'failed' ? 'failed' : 'skipped';
    this.counts[key]++;
    if (test.project.name === 'hostile' && state !== 'skipped') {
      this.hostile.tried++;
      if (state === 'passed') this.hostile.contained++;
      this.hostile.serverErrors += (test.meta() as { hostile?: { serverErrors: number } }).hostile?.serverErrors ?? 0;
    }
    const db = /\[(pglite|postgres)\]/.exec(test.fullName)?.[1];
    if (db) {
      const entry = this.byDatabase.get(db) ?? { passed: 0, failed: 0, skipped: 0 };
      entry[key]++;
      this.byDatabase.set(db, entry);
    }
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>): void {
    for (const [db, c] of [...this.byDatabase.entries()].sort()) {
      console.log(`database ${db}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    }
    if (this.hostile.tried > 0) {
      const h = this.hostile;
      console.log('\nhostile suite        | attacks tried | contained | escaped | 5xx seen');
      console.log(
        `                     | ${String(h.tried).padStart(13)} | ${String(h.contained).padStart(9)} | ${String(h.tried - h.contained).padStart(7)} | ${String(h.serverErrors).padStart(8)}`,
      );
    }
    const { passed, failed, skipped } = this.counts;
    console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
