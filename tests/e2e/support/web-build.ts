import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WEB = path.join(ROOT, 'apps/web');
const INDEX = path.join(WEB, 'dist/index.html');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds apps/web when dist is missing or older than its sources (the same rule as scripts/start.sh). */
export function ensureWebBuild(): string {
  const sources = Math.max(
    newestSource(path.join(WEB, 'src')),
    statSync(path.join(WEB, 'index.html')).mtimeMs,
    statSync(path.join(WEB, 'package.json')).mtimeMs,
  );
  if (!existsSync(INDEX) || statSync(INDEX).mtimeMs < sources) {
    execFileSync('npm', ['run', 'build', '-w', 'apps/web'], { cwd: ROOT, stdio: 'pipe' });
  }
  return path.dirname(INDEX);
}
