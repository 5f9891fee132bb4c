import { describe, expect, it } from 'vitest';
import { ExecBodySchema } from './custom-images.ts';
import { EXEC_LIMITS, utf8Length } from './exec-limits.ts';

const messages = (body: unknown) => {
  const result = ExecBodySchema.safeParse(body);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('exec request bounds', () => {
  it('counts UTF-8 bytes, surrogate pairs as four', () => {
    expect([utf8Length('a'), utf8Length('é'), utf8Length('€'), utf8Length('😀'), utf8Length('\ud800')]).toEqual([1, 2, 3, 4, 3]);
  });

  it('accepts arguments and environment right at the limits', () => {
    const arg = 'x'.repeat(EXEC_LIMITS.maxArgBytes);
    expect(messages({ command: ['echo', arg] })).toEqual([]);
    const env = Object.fromEntries(Array.from({ length: EXEC_LIMITS.maxEnvEntries }, (_, i) => [`V${i}`, 'x']));
    expect(messages({ command: ['true'], env })).toEqual([]);
  });

  it('refuses one argument, all arguments, env entries and env bytes over the limits, saying what to do', () => {
    expect(messages({ command: ['echo', 'x'.repeat(EXEC_LIMITS.maxArgBytes + 1)] })[0]).toMatch(
      /an argument may be at most 64 KiB; pass big data/,
    );
    const many = Array.from({ length: 5 }, () => 'x'.repeat(60 * 1024));
    expect(messages({ command: ['echo', ...many] })[0]).toMatch(/arguments together may be at most 256 KiB/);
    expect(messages({ command: Array.from({ length: EXEC_LIMITS.maxArgs + 1 }, () => 'a') })[0]).toMatch(/at most 4096 arguments/);
    const env = Object.fromEntries(Array.from({ length: EXEC_LIMITS.maxEnvEntries + 1 }, (_, i) => [`V${i}`, 'x']));
    expect(messages({ command: ['true'], env })[0]).toMatch(/at most 1024 environment variables/);
    expect(messages({ command: ['true'], env: { BIG: 'x'.repeat(64 * 1024) } })[0]).toMatch(/an environment variable may be at most/);
    const wide = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`V${i}`, 'x'.repeat(60 * 1024)]));
    expect(messages({ command: ['true'], env: wide })[0]).toMatch(/together may be at most 256 KiB/);
    expect(messages({ command: ['a\0b'] })[0]).toMatch(/NUL/);
    expect(messages({ command: ['true'], env: { A: 'a\0b' } })[0]).toMatch(/NUL/);
  });

  it('normalises cwd and refuses one that climbs, is relative or carries NUL', () => {
    expect(ExecBodySchema.parse({ command: ['pwd'], cwd: '/workspace//src/./lib/' }).cwd).toBe('/workspace/src/lib');
    expect(ExecBodySchema.parse({ command: ['pwd'], cwd: '/' }).cwd).toBe('/');
    expect(messages({ command: ['pwd'], cwd: '/../../../../tmp/x' })[0]).toMatch(/cwd: must not contain "\.\." segments/);
    expect(messages({ command: ['pwd'], cwd: '/workspace/..' })[0]).toMatch(/\.\./);
    expect(messages({ command: ['pwd'], cwd: 'workspace' })[0]).toMatch(/absolute/);
    expect(messages({ command: ['pwd'], cwd: '/a\0b' })[0]).toMatch(/NUL/);
    // A name that merely contains dots is a name.
    expect(ExecBodySchema.parse({ command: ['pwd'], cwd: '/a/..b/c..' }).cwd).toBe('/a/..b/c..');
  });
});
