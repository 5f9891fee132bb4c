import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { ProviderError } from './errors.ts';

/** Symlinks followed while resolving one path, as the kernel's own limit. */
const MAX_SYMLINKS = 40;

/**
 * The host path of `sandboxPath` inside a sandbox whose root filesystem is the host directory
 * `root`, resolved as the sandbox would resolve it but never outside `root`: component by
 * component with lstat, a symlink's target read and resolved again from `root` (absolute) or its
 * directory (relative), `..` stopping at `root`. The answer holds no symlink at the time of the
 * call. Throws `invalid_input` for a NUL byte or a symlink loop, `not_found` when the path does
 * not exist or is not a directory.
 */
export async function resolveDirInsideRoot(provider: string, root: string, sandboxPath: string): Promise<string> {
  if (sandboxPath.includes('\0'))
    throw new ProviderError({ provider, code: 'invalid_input', message: 'a sandbox path may not contain NUL bytes' });
  const pending = posix.resolve('/', sandboxPath).split('/').filter(Boolean);
  const resolved: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const host = posix.join(root, ...resolved, part);
    const stats = await lstat(host).catch(() => null);
    if (!stats) throw new ProviderError({ provider, code: 'not_found', message: `no directory ${sandboxPath} in the sandbox` });
    if (stats.isSymbolicLink()) {
      if (++links > MAX_SYMLINKS) {
        throw new ProviderError({ provider, code: 'invalid_input', message: `${sandboxPath} in the sandbox is a symlink loop` });
      }
      const target = await readlink(host);
      if (target.startsWith('/')) resolved.length = 0;
      pending.unshift(...target.split('/').filter(Boolean));
      continue;
    }
    if (!stats.isDirectory()) {
      throw new ProviderError({ provider, code: 'not_found', message: `${sandboxPath} in the sandbox is not a directory` });
    }
    resolved.push(part);
  }
  return posix.join(root, ...resolved);
}
