import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undeclaredWorkspaceDependencies } from '../../scripts/check-workspace-dependencies.ts';

/**
 * The dependency rules of .dependency-cruiser.cjs, each proved against a small violating tree.
 * The tree is made inside the repository (an ignored `.sandcast-test/` folder) so that its
 * imports resolve through the real node_modules, exactly as the repository's own files do.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');

const FIXTURE: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'fixture', private: true, devDependencies: { vitest: '4.1.12' } }),
  'packages/core/package.json': JSON.stringify({ name: '@sandcast/core', dependencies: {} }),
  'packages/core/src/index.ts': 'export const ok = 1;\n',
  'packages/core/src/uses-pg.ts': "import pg from 'pg';\nexport const client = pg;\n",
  'packages/core/src/uses-node.ts': "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
  'packages/db/package.json': JSON.stringify({ name: '@sandcast/db', dependencies: { pg: '8.23.1' } }),
  'packages/db/src/uses-vitest.ts': "import { expect } from 'vitest';\nexport const check = expect;\n",
  'packages/db/src/uses-pg.ts': "import pg from 'pg';\nexport const client = pg;\n",
  'packages/providers/local/package.json': JSON.stringify({ name: '@sandcast/provider-local', dependencies: { 'tar-stream': '3.2.2' } }),
  'packages/providers/local/src/index.ts': "import tar from 'tar-stream';\nexport const pack = tar;\n",
  'packages/providers/local/src/uses-dockerode.ts': "import Docker from 'dockerode';\nexport const docker = Docker;\n",
  'packages/providers/docker/package.json': JSON.stringify({ name: '@sandcast/provider-docker', dependencies: {} }),
  'packages/providers/docker/src/reaches-local.ts': "import { pack } from '../../local/src/index.ts';\nexport const p = pack;\n",
  'apps/cli/package.json': JSON.stringify({ name: '@sandcast/cli', dependencies: {} }),
  'apps/cli/src/uses-web.ts': "import { label } from '../../web/src/label.ts';\nexport const l = label;\n",
  'apps/cli/src/unresolvable.ts': "import { gone } from './does-not-exist.ts';\nexport const g = gone;\n",
  'apps/web/package.json': JSON.stringify({ name: '@sandcast/web', dependencies: {} }),
  'apps/web/src/label.ts': "export const label = 'x';\n",
  'bench/local-provider/run.ts': "import { pack } from '../../packages/providers/local/src/index.ts';\nexport const p = pack;\n",
  'tests/integration/deep.test.ts': "import { ok } from '../../packages/core/src/index.ts';\nexport const o = ok;\n",
};

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

let dir: string;
let violations: Violation[];

beforeAll(async () => {
  await mkdir(path.join(ROOT, '.sandcast-test'), { recursive: true });
  dir = await mkdtemp(path.join(ROOT, '.sandcast-test', 'dependency-rules-'));
  for (const [file, text] of Object.entries(FIXTURE)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await copyFile(path.join(ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  const { stdout } = await promisify(execFile)(
    DEPCRUISE,
    ['--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json', 'packages', 'apps', 'tests', 'bench'],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' })); // exit 1 = violations found
  violations = JSON.parse(stdout).summary.violations;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function caught(rule: string, from: string): boolean {
  return violations.some((v) => v.rule.name === rule && v.from === from);
}

describe('the dependency rules catch what they name', () => {
  it.each([
    ['core-no-npm-packages', 'packages/core/src/uses-pg.ts'],
    ['core-no-node-builtins', 'packages/core/src/uses-node.ts'],
    ['no-undeclared-dependencies', 'packages/core/src/uses-pg.ts'],
    ['no-undeclared-dependencies', 'packages/providers/local/src/uses-dockerode.ts'],
    ['no-dev-dependencies-at-runtime', 'packages/db/src/uses-vitest.ts'],
    ['no-deep-imports', 'packages/providers/docker/src/reaches-local.ts'],
    ['no-deep-imports-from-tests-and-bench', 'bench/local-provider/run.ts'],
    ['no-deep-imports-from-tests-and-bench', 'tests/integration/deep.test.ts'],
    ['no-cli-web-imports', 'apps/cli/src/uses-web.ts'],
    ['no-unresolvable-imports', 'apps/cli/src/unresolvable.ts'],
  ])('%s: %s', (rule, from) => {
    expect(caught(rule, from), JSON.stringify(violations, null, 1)).toBe(true);
  });

  it('leaves declared vendor dependencies alone', () => {
    const clean = ['packages/db/src/uses-pg.ts', 'packages/providers/local/src/index.ts', 'apps/web/src/label.ts'];
    expect(violations.filter((v) => clean.includes(v.from))).toEqual([]);
  });
});

describe('workspace dependencies are declared (scripts/check-workspace-dependencies.ts)', () => {
  const WORKSPACES: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'fixture', private: true, workspaces: ['packages/db', 'apps/*'] }),
    'packages/db/package.json': JSON.stringify({ name: '@sandcast/db', dependencies: { '@sandcast/core': '0.1.0' } }),
    'packages/db/src/declared.ts': "import type { ErrorCode } from '@sandcast/core';\nexport type Code = ErrorCode;\n",
    'apps/web/package.json': JSON.stringify({ name: '@sandcast/web', dependencies: {} }),
    'apps/web/src/typed.ts': "import type { ErrorCode } from '@sandcast/core';\nexport type Code = ErrorCode;\n",
    'apps/web/src/self.ts': "export { x } from '@sandcast/web';\n",
    'apps/cli/package.json': JSON.stringify({ name: '@sandcast/cli', dependencies: { '@sandcast/client': '0.1.0' } }),
    'apps/cli/src/start.ts': "export const server = import.meta.resolve('@sandcast/server/package.json');\n",
    'apps/cli/src/lazy.ts': "export const load = () => import('@sandcast/db/testing');\nexport { c } from '@sandcast/client';\n",
  };

  it('catches an undeclared Sandcast package, imported or resolved at runtime, and passes a declared one', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'workspace-dependencies-'));
    try {
      for (const [file, text] of Object.entries(WORKSPACES)) {
        await mkdir(path.dirname(path.join(root, file)), { recursive: true });
        await writeFile(path.join(root, file), text);
      }
      expect(await undeclaredWorkspaceDependencies(root)).toEqual([
        'apps/cli/src/lazy.ts: @sandcast/db',
        'apps/cli/src/start.ts: @sandcast/server',
        'apps/web/src/typed.ts: @sandcast/core',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('finds nothing undeclared in this repository', async () => {
    expect(await undeclaredWorkspaceDependencies(ROOT)).toEqual([]);
  });
});
