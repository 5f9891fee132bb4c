/**
 * Every `@sandcast/x` a workspace package uses — imported, type-imported, dynamically imported or
 * resolved at runtime (`import.meta.resolve`, `require.resolve`) — must be in that package's
 * package.json. npm links every workspace into node_modules, so an undeclared one works here and
 * breaks in an install of the package alone. The repository root (tests, bench, scripts) is the
 * workspace root and sees every workspace by definition. Run by `npm run lint`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const USE = /(?:from\s+|import\s*\(\s*|import\s+|resolve\s*\(\s*)['"](@sandcast\/[a-z0-9-]+)(?:\/[^'"]*)?['"]/g;

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await sourceFiles(full)));
    else if (SOURCE.test(entry.name)) files.push(full);
  }
  return files;
}

/** `file: @sandcast/x` for every use of a workspace package its own package.json does not declare. */
export async function undeclaredWorkspaceDependencies(root: string): Promise<string[]> {
  const rootManifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const dirs: string[] = [];
  for (const pattern of rootManifest.workspaces ?? []) {
    if (!pattern.endsWith('/*')) dirs.push(path.join(root, pattern));
    else {
      const parent = path.join(root, pattern.slice(0, -2));
      for (const entry of await readdir(parent, { withFileTypes: true })) if (entry.isDirectory()) dirs.push(path.join(parent, entry.name));
    }
  }
  const problems: string[] = [];
  for (const dir of dirs) {
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | string>;
    const declared = new Set<string>([manifest.name as string]);
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const name of Object.keys((manifest[field] as Record<string, string> | undefined) ?? {})) declared.add(name);
    }
    for (const file of await sourceFiles(dir)) {
      for (const match of (await readFile(file, 'utf8')).matchAll(USE)) {
        const used = match[1] as string;
        if (!declared.has(used)) problems.push(`${path.relative(root, file)}: ${used}`);
      }
    }
  }
  return [...new Set(problems)].sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = await undeclaredWorkspaceDependencies(path.resolve(fileURLToPath(import.meta.url), '../..'));
  if (problems.length > 0) {
    console.error(
      `These files use a Sandcast package their package.json does not declare. Add it (version 0.1.0) to that package's dependencies — and check the dependency table allows it:\n  ${problems.join('\n  ')}`,
    );
    process.exit(1);
  }
  console.log('✔ every workspace package declares the Sandcast packages it uses');
}
