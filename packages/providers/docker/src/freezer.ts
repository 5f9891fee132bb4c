import { access, constants, readFile, writeFile } from 'node:fs/promises';

/**
 * The cgroup freezer of a container on this machine, reached directly when the engine cannot be
 * trusted to thaw it (decision 0011): `docker pause` freezes the container's cgroup, and an exec
 * whose `runc init` joined the cgroup just before the freeze stays frozen half-started. `runc exec`
 * then waits for it forever, the container's shim with it, and the engine's unpause never runs.
 * Writing THAWED to the freezer lets that exec finish, and the engine answers again.
 */
export interface Freezer {
  /** `freezer.state` (cgroup v1) or `cgroup.freeze` (cgroup v2). */
  path: string;
  version: 1 | 2;
}

type FreezerState = 'THAWED' | 'FREEZING' | 'FROZEN';

/**
 * The freezer of the cgroup process `pid` is in, when this process can write it and the cgroup is
 * the container's (its path names `containerId`); null otherwise (a remote engine, no root).
 */
export async function findFreezer(pid: number, containerId: string): Promise<Freezer | null> {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => null);
  if (text === null) return null;
  const candidates: Freezer[] = [];
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second).split(',');
    const path = line.slice(second + 1);
    if (!path.includes(containerId)) continue;
    if (controllers.includes('freezer')) candidates.unshift({ path: `/sys/fs/cgroup/freezer${path}/freezer.state`, version: 1 });
    else if (line.startsWith('0::')) {
      candidates.push({ path: `/sys/fs/cgroup${path}/cgroup.freeze`, version: 2 });
      candidates.push({ path: `/sys/fs/cgroup/unified${path}/cgroup.freeze`, version: 2 });
    }
  }
  for (const candidate of candidates) {
    if (
      await access(candidate.path, constants.W_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

export async function freezerState(freezer: Freezer): Promise<FreezerState> {
  const text = (await readFile(freezer.path, 'utf8')).trim();
  if (freezer.version === 2) {
    // cgroup.freeze says what was asked; cgroup.events says whether it took.
    if (text === '0') return 'THAWED';
    const events = await readFile(freezer.path.replace(/cgroup\.freeze$/, 'cgroup.events'), 'utf8').catch(() => '');
    return /^frozen 1$/m.test(events) ? 'FROZEN' : 'FREEZING';
  }
  return text === 'FROZEN' || text === 'FREEZING' ? text : 'THAWED';
}

async function setFreezer(freezer: Freezer, state: 'FROZEN' | 'THAWED'): Promise<void> {
  const value = freezer.version === 2 ? (state === 'FROZEN' ? '1' : '0') : state;
  await writeFile(freezer.path, value);
}

/**
 * Asks for `state` and waits for the kernel to reach it, reading the state back (the kernel sends
 * no event a process can wait on for a v1 freezer). Fails after `deadlineMs`.
 */
export async function driveFreezer(freezer: Freezer, state: 'FROZEN' | 'THAWED', deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    await setFreezer(freezer, state);
    if ((await freezerState(freezer)) === state) return;
    if (Date.now() > until) throw new Error(`the cgroup freezer at ${freezer.path} did not reach ${state} within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
