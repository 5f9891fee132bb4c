import type { ChangeKind, FileChange } from '@sandcast/provider-sdk';
import { WORKDIR } from './config.ts';
import { toProviderError } from './connection.ts';
import type { ContainerHandle } from './containers.ts';
import { runExec } from './exec.ts';

/** Mount points Docker creates in every container's writable layer; not the operator's changes. */
const ENGINE_ARTEFACTS = new Set(['/sbin/docker-init', '/usr/sbin/docker-init', '/dev', '/etc/hostname', '/etc/hosts', '/etc/resolv.conf']);

/** Kinds in the engine's diff (`docker diff`): 0 modified, 1 added, 2 deleted. */
const KIND: Record<number, ChangeKind> = { 0: 'modified', 1: 'added', 2: 'deleted' };

/**
 * One pass over the changed paths inside the container: GNU find prints type and size for every
 * path in a single process; where find lacks -printf (busybox), a shell loop gives types only.
 * Paths arrive NUL-separated on stdin; answers leave as `type<TAB>size<TAB>path<NUL>`.
 */
const STAT_SCRIPT = `
if find / -maxdepth 0 -printf '' >/dev/null 2>&1; then
  xargs -0 -r sh -c 'find "$@" -maxdepth 0 -printf "%y\\t%s\\t%p\\0" 2>/dev/null' sh
else
  tr '\\0' '\\n' | while IFS= read -r p; do
    if [ -L "$p" ]; then t=l; elif [ -d "$p" ]; then t=d; elif [ -f "$p" ]; then t=f; elif [ -e "$p" ]; then t=o; else continue; fi
    printf '%s\\t\\t%s\\0' "$t" "$p"
  done
fi`;

const TYPE: Record<string, FileChange['type']> = { f: 'file', d: 'directory', l: 'symlink' };

async function statPaths(
  handle: ContainerHandle,
  paths: string[],
): Promise<Map<string, { type: FileChange['type']; size: number | null }>> {
  const result = new Map<string, { type: FileChange['type']; size: number | null }>();
  if (paths.length === 0) return result;
  const answer = await runExec(handle, {
    command: ['/bin/sh', '-c', STAT_SCRIPT],
    cwd: '/',
    stdin: `${paths.join('\0')}\0`,
    timeoutMs: 120_000,
    // A long change list is still one answer; the API's per-call cap is for command output.
    maxOutputBytes: 64 * 1024 * 1024,
  });
  for (const record of answer.stdout.split('\0')) {
    const [t, size, ...rest] = record.split('\t');
    const path = rest.join('\t');
    if (!t || !path) continue;
    const type = TYPE[t] ?? 'other';
    result.set(path, { type, size: type === 'file' && size ? Number(size) : null });
  }
  return result;
}

type DiffEntry = { Path: string; Kind: number };

/**
 * The engine's diff answer. dockerode hands it over parsed when the engine labels it JSON, and as
 * raw bytes when it does not (seen under load): accept both.
 */
export function parseDiff(raw: unknown): DiffEntry[] {
  if (raw === null || raw === undefined) return [];
  if (Buffer.isBuffer(raw) || typeof raw === 'string') {
    const text = raw.toString().trim();
    return text ? ((JSON.parse(text) as DiffEntry[] | null) ?? []) : [];
  }
  return Array.isArray(raw) ? (raw as DiffEntry[]).filter((e) => e && typeof e.Path === 'string') : [];
}

/** What a container changed relative to its image, as the engine's diff reports it. */
export async function listChanges(handle: ContainerHandle): Promise<FileChange[]> {
  let diff: Array<{ Path: string; Kind: number }>;
  try {
    diff = parseDiff(await handle.container.changes());
  } catch (error) {
    throw toProviderError(error, {
      action: 'list changes',
      what: `setup container ${handle.instanceId.slice(0, 12)}`,
      engineUrl: handle.engineUrl,
    });
  }
  const relevant = diff.filter((change) => !ENGINE_ARTEFACTS.has(change.Path) && !change.Path.startsWith('/dev/'));
  const present = relevant.filter((change) => change.Kind !== 2 && !change.Path.includes('\0')).map((change) => change.Path);
  const stats = await statPaths(handle, present);
  return relevant
    .map((change): FileChange => {
      const kind = KIND[change.Kind] ?? 'modified';
      const stat = kind === 'deleted' ? undefined : stats.get(change.Path);
      return { path: change.Path, kind, sizeBytes: stat?.size ?? null, type: stat?.type ?? 'other' };
    })
    .filter(isRealChange)
    .sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * The engine reports a directory as modified whenever an entry in it was added or removed, or its
 * mtime moved (`/usr`, `/usr/sbin` for the engine's own docker-init, the workdir). Those entries
 * are reported themselves, so a modified directory says nothing the review does not already show.
 * The one change this hides is a chmod/chown of an existing directory: the diff carries no
 * metadata to tell it from an mtime, and the review is about files and likely secrets. The
 * working directory the engine adds to an image without one is no change of the operator's either.
 */
function isRealChange(change: FileChange): boolean {
  if (change.type !== 'directory') return true;
  // The engine creates the working directory in every container whose image lacks it.
  return !(change.kind === 'modified' || (change.kind === 'added' && change.path === WORKDIR));
}
