import { normaliseSandboxPath, sandboxPathProblem } from '@sandcast/core';
import { z } from 'zod';

/**
 * Bounds of an exec request, checked before any provider call. Linux refuses a single argument or
 * environment string over 128 KiB (MAX_ARG_STRLEN) and all of them together over ARG_MAX (a quarter
 * of the stack limit, 2 MiB by default) with E2BIG; these stay well below both, leaving room for
 * what a provider adds (its own wrapper arguments and the environment's configured variables).
 */
export const EXEC_LIMITS = {
  /** Arguments in `command`, the program included. */
  maxArgs: 4096,
  /** UTF-8 bytes of one argument. */
  maxArgBytes: 64 * 1024,
  /** UTF-8 bytes of all arguments together. */
  maxArgvBytes: 256 * 1024,
  /** Entries in `env`. */
  maxEnvEntries: 1024,
  /** UTF-8 bytes of one `NAME=value` entry. */
  maxEnvEntryBytes: 64 * 1024,
  /** UTF-8 bytes of all `NAME=value` entries together. */
  maxEnvBytes: 256 * 1024,
} as const;

/** UTF-8 length without allocating (the contracts run in browsers too, where Buffer is absent). */
export function utf8Length(value: string): number {
  let bytes = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const KiB = (n: number) => `${n / 1024} KiB`;
const noNul = (value: string) => !value.includes('\0');
const BIG_DATA_HINT = 'pass big data as a file (write it into the sandbox) or through stdin instead';

/** One argument: no NUL (it would end the C string), at most maxArgBytes. */
const Argument = z
  .string()
  .refine(noNul, 'arguments must not contain a NUL character')
  .refine((a) => utf8Length(a) <= EXEC_LIMITS.maxArgBytes, `an argument may be at most ${KiB(EXEC_LIMITS.maxArgBytes)}; ${BIG_DATA_HINT}`);

export const ExecCommandSchema = z
  .array(Argument)
  .min(1, 'command needs at least the program to run')
  .max(EXEC_LIMITS.maxArgs, `a command may have at most ${EXEC_LIMITS.maxArgs} arguments`)
  .refine(
    (args) => args.reduce((sum, a) => sum + utf8Length(a) + 1, 0) <= EXEC_LIMITS.maxArgvBytes,
    `the arguments together may be at most ${KiB(EXEC_LIMITS.maxArgvBytes)}; ${BIG_DATA_HINT}`,
  );

export const ExecEnvSchema = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are letters, digits and _'),
    z.string().refine(noNul, 'environment values must not contain a NUL character'),
  )
  .refine((env) => Object.keys(env).length <= EXEC_LIMITS.maxEnvEntries, {
    message: `at most ${EXEC_LIMITS.maxEnvEntries} environment variables may be set per command`,
    abort: true,
  })
  .refine(
    (env) => Object.entries(env).every(([k, v]) => utf8Length(k) + utf8Length(v) + 2 <= EXEC_LIMITS.maxEnvEntryBytes),
    `an environment variable may be at most ${KiB(EXEC_LIMITS.maxEnvEntryBytes)}; ${BIG_DATA_HINT}`,
  )
  .refine(
    (env) => Object.entries(env).reduce((sum, [k, v]) => sum + utf8Length(k) + utf8Length(v) + 2, 0) <= EXEC_LIMITS.maxEnvBytes,
    `the environment variables together may be at most ${KiB(EXEC_LIMITS.maxEnvBytes)}; ${BIG_DATA_HINT}`,
  );

/** An absolute directory inside the sandbox: `..` and NUL refused, the rest normalised. */
export const SandboxPathSchema = z
  .string()
  .superRefine((value, ctx) => {
    const problem = sandboxPathProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .overwrite(normaliseSandboxPath);
