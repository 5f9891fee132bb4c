import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalProvider } from './provider.ts';

export { KEPT_CAPABILITIES } from './runtime.ts';

/** Why the local provider cannot run here (not root, a tool missing, …), or null. */
export async function localSkipReason(): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'sandcast-local-probe-'));
  try {
    const availability = await createLocalProvider({ dataDir: dir }).availability();
    return availability.available ? null : availability.reason;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Host kernel settings a sandbox must never change, with a value different from any sane host's
 * to try. A test snapshots them, attacks, compares, and restores whatever did change (so a
 * regression fails the test without leaving the machine altered).
 */
export const GUARDED_SYSCTLS = [
  { path: '/proc/sys/kernel/core_pattern', attempt: '|/bin/false sandcast-containment-test' },
  { path: '/proc/sys/kernel/panic', attempt: '7' },
  { path: '/proc/sys/vm/overcommit_memory', attempt: '2' },
] as const;

/** Written from inside; a write that succeeds is the escape (it has no value to compare). */
export const WRITE_ONLY_PATHS = ['/proc/sys/vm/drop_caches', '/proc/sysrq-trigger'] as const;

export async function snapshotSysctls(): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const { path } of GUARDED_SYSCTLS) values.set(path, await readFile(path, 'utf8'));
  return values;
}

/** Restores changed values; returns the paths that had changed. */
export async function restoreSysctls(before: Map<string, string>): Promise<string[]> {
  const changed: string[] = [];
  for (const [path, value] of before) {
    if ((await readFile(path, 'utf8')) === value) continue;
    changed.push(path);
    await writeFile(path, value);
  }
  return changed;
}

/**
 * A shell script run inside a sandbox: every write attempt prints `<path> wrote` or
 * `<path> refused`, then it tries to lift the covers (umount, remount) and read masked files.
 */
export function attackScript(): string {
  const writes = [
    ...GUARDED_SYSCTLS.map(
      ({ path, attempt }) => `if printf '%s\\n' '${attempt}' > ${path}; then echo "${path} wrote"; else echo "${path} refused"; fi`,
    ),
    ...WRITE_ONLY_PATHS.map((path) => `if echo 1 > ${path}; then echo "${path} wrote"; else echo "${path} refused"; fi`),
  ];
  const lifts = ['umount /proc/sys', 'umount -l /proc/keys', 'mount -o remount,rw /proc/sys', 'mount -t proc proc /mnt'].map(
    (cmd) => `if ${cmd} 2>/dev/null; then echo "${cmd}: done"; else echo "${cmd}: refused"; fi`,
  );
  const reads = ['/proc/kcore', '/proc/keys', '/proc/timer_list'].map(
    (path) => `if [ -n "$(head -c 64 ${path} 2>/dev/null)" ]; then echo "${path} readable"; else echo "${path} hidden"; fi`,
  );
  return [...writes, ...lifts, ...reads, 'grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status'].join('\n');
}

/** CapEff bits of the capabilities a sandbox keeps (runtime.ts KEPT_CAPABILITIES). */
export const KEPT_CAP_NUMBERS: Record<string, number> = {
  CAP_CHOWN: 0,
  CAP_DAC_OVERRIDE: 1,
  CAP_FOWNER: 3,
  CAP_FSETID: 4,
  CAP_KILL: 5,
  CAP_SETGID: 6,
  CAP_SETUID: 7,
  CAP_SETPCAP: 8,
  CAP_NET_BIND_SERVICE: 10,
  CAP_SYS_CHROOT: 18,
  CAP_AUDIT_WRITE: 29,
  CAP_SETFCAP: 31,
};

/** Docker's default capability set: a sandbox keeps at most these. */
export const DOCKER_DEFAULT_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

/** Asserts on the output of `attackScript()`; returns a list of escapes (empty when contained). */
export function escapesIn(output: string, keptCaps: readonly string[]): string[] {
  const escapes: string[] = [];
  for (const line of output.split('\n')) {
    if (/ wrote$|: done$| readable$/.test(line)) escapes.push(line);
  }
  const expected = keptCaps.reduce((mask, cap) => mask | (1n << BigInt(KEPT_CAP_NUMBERS[cap] ?? 63)), 0n);
  const capEff = /CapEff:\s*([0-9a-f]+)/.exec(output)?.[1];
  if (!capEff || BigInt(`0x${capEff}`) !== expected) escapes.push(`CapEff ${capEff} is not the kept set ${expected.toString(16)}`);
  if (!/NoNewPrivs:\s*1/.test(output)) escapes.push('NoNewPrivs is not 1');
  if (!/Seccomp:\s*2/.test(output)) escapes.push('no seccomp filter');
  for (const path of [...GUARDED_SYSCTLS.map((s) => s.path), ...WRITE_ONLY_PATHS]) {
    if (!output.includes(`${path} refused`)) escapes.push(`${path}: no refusal seen`);
  }
  return escapes;
}
