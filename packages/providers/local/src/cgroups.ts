import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killQuietly, sleep } from './proc.ts';

export interface Limits {
  cpu: number;
  memoryMb: number;
  pidsLimit: number;
}

/**
 * Cgroups of the local provider. Each sandbox gets a group with its limits; inside it, the
 * long-lived init and every exec get a child group, so a timed-out exec's whole process tree can
 * be killed without touching the rest of the sandbox. Works on cgroup v2 and on v1 (including
 * hybrid hosts whose v2 mount has no controllers).
 */
export interface Cgroups {
  readonly version: 1 | 2;
  /** Creates the sandbox group with its limits. */
  createSandbox(instanceId: string, limits: Limits): Promise<void>;
  /** Creates a child group; returns the `cgroup.procs` files a process must join. */
  createChild(instanceId: string, child: string): Promise<string[]>;
  /** The `cgroup.procs` files of a child group (made earlier), the group's own last. */
  childProcs(instanceId: string, child: string): string[];
  /**
   * Kills every process in a child group (or the whole sandbox when child is null) and waits for
   * them to exit; with `reaped`, also until their pids are released so the sandbox can fork again.
   */
  kill(instanceId: string, child: string | null, options?: { reaped?: boolean }): Promise<void>;
  /**
   * Freezes (true) or thaws (false) every process of the sandbox; a freeze resolves once the
   * kernel reports the whole group frozen (bounded: a group that does not settle is thawed and
   * the call throws).
   */
  freeze(instanceId: string, frozen: boolean): Promise<void>;
  /** Removes a child group if it is empty. */
  removeChild(instanceId: string, child: string): Promise<void>;
  /** Kills everything and removes the sandbox group. */
  removeSandbox(instanceId: string): Promise<void>;
  /** Sandbox groups that exist, for crash recovery. */
  listSandboxes(): Promise<string[]>;
  /** Removes the provider's own group when no sandbox is left in it. */
  removeRootIfEmpty(): Promise<void>;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'freezer'] as const;

/** Null when neither a usable v2 hierarchy nor the v1 controllers are mounted. */
export function detectCgroups(groupName: string): Cgroups | null {
  if (existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) return new CgroupsV2(join(CGROUP_ROOT, groupName));
  if (V1_CONTROLLERS.every((c) => existsSync(join(CGROUP_ROOT, c, 'cgroup.procs')))) {
    return new CgroupsV1(Object.fromEntries(V1_CONTROLLERS.map((c) => [c, join(CGROUP_ROOT, c, groupName)])) as Record<V1, string>);
  }
  return null;
}

type V1 = (typeof V1_CONTROLLERS)[number];

async function readPids(procsFile: string): Promise<number[]> {
  try {
    const text = await readFile(procsFile, 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => Number(line));
  } catch {
    return [];
  }
}

/** Every cgroup.procs file in a group and its descendants. */
async function procsFiles(dir: string): Promise<string[]> {
  const files = [join(dir, 'cgroup.procs')];
  let entries: import('node:fs').Dirent[] = [];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  for (const entry of entries) if (entry.isDirectory()) files.push(...(await procsFiles(join(dir, entry.name))));
  return files;
}

async function removeTree(dir: string): Promise<void> {
  let entries: import('node:fs').Dirent[] = [];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory()) await removeTree(join(dir, entry.name));
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(20);
    }
  }
}

async function countLines(file: string): Promise<number> {
  return (await readPids(file)).length;
}

/**
 * Killed processes keep counting against pids.max until their parent (often the sandbox's pid 1)
 * reaps them; wait until the charge matches the live tasks so the next exec can fork.
 */
async function waitReaped(pidsCurrent: string, taskFiles: () => Promise<string[]>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const current = Number((await readFile(pidsCurrent, 'utf8').catch(() => '0')).trim());
    let live = 0;
    for (const file of await taskFiles()) live += await countLines(file);
    if (current <= live) return;
    await sleep(5);
  }
}

async function waitEmpty(dir: string, killEach: boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    let any = false;
    for (const file of await procsFiles(dir)) {
      for (const pid of await readPids(file)) {
        any = true;
        if (killEach) killQuietly(pid);
      }
    }
    if (!any) return;
    await sleep(10);
  }
}

class CgroupsV1 implements Cgroups {
  async removeRootIfEmpty(): Promise<void> {
    if ((await this.listSandboxes()).length > 0) return;
    for (const c of V1_CONTROLLERS) await rmdir(this.roots[c]).catch(() => undefined);
  }

  readonly version = 1 as const;
  constructor(private readonly roots: Record<V1, string>) {}

  async createSandbox(instanceId: string, limits: Limits): Promise<void> {
    for (const c of V1_CONTROLLERS) await mkdir(join(this.roots[c], instanceId), { recursive: true });
    const mem = join(this.roots.memory, instanceId);
    const bytes = String(limits.memoryMb * 1024 * 1024);
    await writeFile(join(mem, 'memory.limit_in_bytes'), bytes);
    if (existsSync(join(mem, 'memory.memsw.limit_in_bytes')))
      await writeFile(join(mem, 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined);
    await writeFile(join(this.roots.pids, instanceId, 'pids.max'), String(limits.pidsLimit));
    const cpu = join(this.roots.cpu, instanceId);
    await writeFile(join(cpu, 'cpu.cfs_period_us'), '100000');
    await writeFile(join(cpu, 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpu * 100000))));
  }

  async createChild(instanceId: string, child: string): Promise<string[]> {
    // Limits live on the sandbox group; only the freezer hierarchy needs a group per exec.
    await mkdir(join(this.roots.freezer, instanceId, child), { recursive: true });
    return this.childProcs(instanceId, child);
  }

  childProcs(instanceId: string, child: string): string[] {
    const freezer = join(this.roots.freezer, instanceId, child);
    return [
      join(this.roots.memory, instanceId, 'cgroup.procs'),
      join(this.roots.pids, instanceId, 'cgroup.procs'),
      join(this.roots.cpu, instanceId, 'cgroup.procs'),
      join(freezer, 'cgroup.procs'),
    ];
  }

  async kill(instanceId: string, child: string | null, options: { reaped?: boolean } = {}): Promise<void> {
    const dir = child ? join(this.roots.freezer, instanceId, child) : join(this.roots.freezer, instanceId);
    if (!existsSync(dir)) return;
    // Kill until empty: a process forked between reading the list and the kill is caught on the
    // next pass, and the pids limit bounds how many there can be. (The v1 freezer can leave killed
    // tasks stuck, so it only serves as the grouping here.)
    await waitEmpty(dir, true);
    if (!options.reaped) return;
    const pids = join(this.roots.pids, instanceId);
    await waitReaped(join(pids, 'pids.current'), async () => [join(pids, 'tasks')]);
  }

  async freeze(instanceId: string, frozen: boolean): Promise<void> {
    const state = join(this.roots.freezer, instanceId, 'freezer.state');
    await writeFile(state, frozen ? 'FROZEN' : 'THAWED');
    if (frozen)
      await settle(
        instanceId,
        async () => (await readFile(state, 'utf8')).trim() === 'FROZEN',
        () => this.freeze(instanceId, false),
      );
  }

  async removeChild(instanceId: string, child: string): Promise<void> {
    await rmdir(join(this.roots.freezer, instanceId, child)).catch(() => undefined);
  }

  async removeSandbox(instanceId: string): Promise<void> {
    await this.kill(instanceId, null);
    for (const c of V1_CONTROLLERS) {
      const dir = join(this.roots[c], instanceId);
      await waitEmpty(dir, true);
      await removeTree(dir);
    }
  }

  async listSandboxes(): Promise<string[]> {
    const found = new Set<string>();
    for (const c of V1_CONTROLLERS) {
      for (const entry of await readdir(this.roots[c], { withFileTypes: true }).catch(() => []))
        if (entry.isDirectory()) found.add(entry.name);
    }
    return [...found];
  }
}

class CgroupsV2 implements Cgroups {
  async removeRootIfEmpty(): Promise<void> {
    if ((await this.listSandboxes()).length === 0) await rmdir(this.root).catch(() => undefined);
  }

  readonly version = 2 as const;
  constructor(private readonly root: string) {}

  private async ensureRoot(): Promise<void> {
    if (existsSync(this.root)) return;
    await writeFile(join(CGROUP_ROOT, 'cgroup.subtree_control'), '+memory +pids +cpu').catch(() => undefined);
    await mkdir(this.root, { recursive: true });
    await writeFile(join(this.root, 'cgroup.subtree_control'), '+memory +pids +cpu');
  }

  async createSandbox(instanceId: string, limits: Limits): Promise<void> {
    await this.ensureRoot();
    const dir = join(this.root, instanceId);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
    await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    await writeFile(join(dir, 'pids.max'), String(limits.pidsLimit));
    await writeFile(join(dir, 'cpu.max'), `${Math.max(1000, Math.round(limits.cpu * 100000))} 100000`);
  }

  async createChild(instanceId: string, child: string): Promise<string[]> {
    await mkdir(join(this.root, instanceId, child), { recursive: true });
    return this.childProcs(instanceId, child);
  }

  childProcs(instanceId: string, child: string): string[] {
    return [join(this.root, instanceId, child, 'cgroup.procs')];
  }

  async kill(instanceId: string, child: string | null, options: { reaped?: boolean } = {}): Promise<void> {
    const dir = child ? join(this.root, instanceId, child) : join(this.root, instanceId);
    if (!existsSync(dir)) return;
    await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    await waitEmpty(dir, true);
    if (!options.reaped) return;
    const sandbox = join(this.root, instanceId);
    await waitReaped(join(sandbox, 'pids.current'), async () =>
      (await procsFiles(sandbox)).map((f) => f.replace(/cgroup\.procs$/, 'cgroup.threads')),
    );
  }

  async freeze(instanceId: string, frozen: boolean): Promise<void> {
    const dir = join(this.root, instanceId);
    await writeFile(join(dir, 'cgroup.freeze'), frozen ? '1' : '0');
    if (frozen)
      await settle(
        instanceId,
        async () => /^frozen 1$/m.test(await readFile(join(dir, 'cgroup.events'), 'utf8')),
        () => this.freeze(instanceId, false),
      );
  }

  async removeChild(instanceId: string, child: string): Promise<void> {
    await rmdir(join(this.root, instanceId, child)).catch(() => undefined);
  }

  async removeSandbox(instanceId: string): Promise<void> {
    await this.kill(instanceId, null);
    await removeTree(join(this.root, instanceId));
  }

  async listSandboxes(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  }
}

/** Waits (at most ~2 s) for a freeze to take; one that does not is undone and reported. */
async function settle(instanceId: string, done: () => Promise<boolean>, undo: () => Promise<void>): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (await done()) return;
    await sleep(5);
  }
  await undo();
  throw new Error(`the processes of sandbox ${instanceId} did not freeze; try again`);
}
