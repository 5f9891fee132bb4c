import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveDirInsideRoot } from './host-path.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'sandcast-root-'));
  await mkdir(path.join(root, 'workspace/project'), { recursive: true });
  await mkdir(path.join(root, 'etc'));
  await writeFile(path.join(root, 'workspace/file'), 'x');
  await symlink('/etc', path.join(root, 'workspace/abs'));
  await symlink('../../../../..', path.join(root, 'workspace/up'));
  await symlink('project', path.join(root, 'workspace/rel'));
  await symlink('/workspace/chain2', path.join(root, 'workspace/chain1'));
  await symlink('rel', path.join(root, 'workspace/chain2'));
  await symlink('loop', path.join(root, 'workspace/loop'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const resolve = (p: string) => resolveDirInsideRoot('test', root, p);
const codeOf = (p: string) =>
  resolve(p).then(
    () => 'resolved',
    (e: { code?: string }) => e.code,
  );

describe('resolveDirInsideRoot', () => {
  it('resolves symlinks and `..` as the sandbox would, without leaving the root', async () => {
    expect(await resolve('/workspace')).toBe(path.join(root, 'workspace'));
    expect(await resolve('/workspace/abs')).toBe(path.join(root, 'etc'));
    expect(await resolve('/workspace/up')).toBe(root);
    expect(await resolve('/workspace/up/workspace/rel')).toBe(path.join(root, 'workspace/project'));
    expect(await resolve('/workspace/chain1')).toBe(path.join(root, 'workspace/project'));
    expect(await resolve('/../../workspace/./project/..')).toBe(path.join(root, 'workspace'));
    expect(await resolve('workspace/project')).toBe(path.join(root, 'workspace/project'));
  });

  it('refuses loops and NUL bytes, and says not_found for a missing path or a file', async () => {
    expect(await codeOf('/workspace/loop')).toBe('invalid_input');
    expect(await codeOf('/workspace/a\0b')).toBe('invalid_input');
    expect(await codeOf('/workspace/missing')).toBe('not_found');
    expect(await codeOf('/workspace/file')).toBe('not_found');
  });
});
