/**
 * Absolute paths inside a sandbox (an exec's `cwd`, an environment's `workdir`) as the API accepts
 * them: no NUL, no `..` segment (a path that climbs is refused, never resolved, so it cannot be
 * made to name a host path through a runtime that joins it onto a root), and normalised (`//` and
 * `.` segments and a trailing `/` dropped).
 */
export function sandboxPathProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'must be an absolute path inside the sandbox (start with /)';
  if (path.includes('\0')) return 'must not contain a NUL character';
  if (path.split('/').includes('..')) return 'must not contain ".." segments; name the directory directly';
  if (path.length > 4096) return 'must be at most 4096 characters (PATH_MAX)';
  return null;
}

/** The same path without empty or `.` segments; call it on a path sandboxPathProblem accepted. */
export function normaliseSandboxPath(path: string): string {
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  return `/${segments.join('/')}`;
}
