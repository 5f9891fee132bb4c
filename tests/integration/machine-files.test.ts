import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE = path.resolve(import.meta.dirname, '../../packages/core/src');

/**
 * The state machine files keep the shape the architecture asks for: a small diagram in the
 * header naming every status, and a comment on every edge of the table saying why it exists.
 */
describe('state machine files', async () => {
  const files = (await readdir(CORE)).filter((f) => f.endsWith('.machine.ts'));

  it('finds the machines', () => {
    expect(files.sort()).toEqual(['custom-image.machine.ts', 'sandbox.machine.ts', 'setup-session.machine.ts']);
  });

  for (const file of files) {
    it(`${file}: a header diagram naming every status, and a comment per edge`, async () => {
      const source = await readFile(path.join(CORE, file), 'utf8');
      const header = source.match(/\/\*\*([\s\S]*?)\*\//)?.[1] ?? '';
      expect(header, 'the header needs a diagram').toMatch(/─►|►/);

      const table = source.slice(source.indexOf('defineMachine<'));
      const statuses = [...table.matchAll(/^ {2}(\w+): \[/gm)].map((m) => m[1]!);
      expect(statuses.length).toBeGreaterThan(0);
      for (const status of statuses) expect(header, `the diagram should show ${status}`).toContain(status);

      const lines = table.split('\n');
      let edges = 0;
      lines.forEach((line, i) => {
        if (!/^ {4}'\w+',$/.test(line)) return;
        edges++;
        expect(lines[i - 1]?.trim().startsWith('//'), `${file}:${line.trim()} needs a comment saying why the edge exists`).toBe(true);
      });
      expect(edges).toBeGreaterThan(0);
    });
  }
});
