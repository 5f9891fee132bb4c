import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installedPackages, scriptCommands, uncoveredCommands } from './support/shell-commands.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every shell script of the repository (node_modules and dot-directories left out). */
function shellScripts(dir = ROOT): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...shellScripts(full));
    else if (entry.name.endsWith('.sh')) found.push(full);
  }
  return found;
}

describe('the scripts install every tool they call (a fresh Debian machine runs the README commands)', () => {
  const scripts = Object.fromEntries(shellScripts().map((file) => [path.relative(ROOT, file), readFileSync(file, 'utf8')]));

  it('finds the scripts', () => {
    expect(Object.keys(scripts)).toEqual(
      expect.arrayContaining(['scripts/test.sh', 'scripts/services.sh', 'packages/providers/docker/scripts/ci-setup.sh']),
    );
  });

  it('every external command a script calls is installed by a script or part of a base Debian system', () => {
    expect(uncoveredCommands(scripts)).toEqual([]);
  });

  it('every script parses', () => {
    for (const [file, text] of Object.entries(scripts)) {
      const shell = text.startsWith('#!/bin/sh') ? 'sh' : 'bash';
      expect(() => execFileSync(shell, ['-n', path.join(ROOT, file)], { stdio: 'pipe' }), file).not.toThrow();
    }
  });

  it('catches a tool used without an install step: the docker set-up before it installed debootstrap', () => {
    const before = [
      'log() { printf \'[docker ci-setup] %s\\n\' "$*" >&2; }',
      'command -v debootstrap >/dev/null || { log "debootstrap is not installed (apt-get install debootstrap)"; exit 1; }',
      'ROOT="$(mktemp -d /tmp/sandcast-rootfs.XXXXXX)"',
      'debootstrap --variant=minbase "$SUITE" "$ROOT" $MIRROR >"$ROOT.log" 2>&1',
    ].join('\n');
    expect(uncoveredCommands({ 'ci-setup.sh': before })).toEqual([
      expect.objectContaining({ command: 'debootstrap', why: expect.stringContaining('no script installs') }),
    ]);
    const after = `${before}\napt_install() { apt-get install -y "$@"; }\ncommand -v debootstrap >/dev/null || apt_install debootstrap debian-archive-keyring`;
    expect(uncoveredCommands({ 'ci-setup.sh': after })).toEqual([]);
  });

  it('an unknown tool is named, with what to do', () => {
    expect(uncoveredCommands({ 'x.sh': 'frobnicate --all\n' })).toEqual([
      expect.objectContaining({ command: 'frobnicate', why: expect.stringContaining('COMMAND_PACKAGES') }),
    ]);
  });

  it('reads commands as the shell does: wrappers, substitutions, variables, functions, quotes and comments', () => {
    const text = [
      '#!/usr/bin/env bash',
      '# gcc in a comment is not a call',
      'helper() { echo "gcc in a string is not a call"; }',
      'helper',
      '$SUDO apt-get install -y $missing',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
      '${SUDO:-} modprobe overlay || true',
      "ver=$(dpkg -s x | awk '{print $2}')",
      'echo "version $(uname -r) and $(( 1 + 2 ))"',
      'nohup dockerd --bridge=none >/tmp/log 2>&1 &',
      'timeout 5 flock 9',
      'FOO=1 BAR=2 sha256sum file',
      '"$bindir/initdb" -D x; $bindir/pg_ctl start',
      'command -v bwrap >/dev/null || missing="$missing bubblewrap"',
      'if ! pg_isready -q; then sleep 1; fi',
    ].join('\n');
    expect([...scriptCommands(text)].sort()).toEqual(
      ['apt-get', 'awk', 'bwrap', 'dockerd', 'dpkg', 'flock', 'modprobe', 'pg_isready', 'sha256sum', 'sleep', 'uname'].sort(),
    );
    expect([...installedPackages(text)]).toEqual(['bubblewrap']);
    expect(
      [...installedPackages('apt_install postgresql docker.io\nas_root apt-get install -y -q gcc iproute2 >/dev/null\n')].sort(),
    ).toEqual(['docker.io', 'gcc', 'iproute2', 'postgresql'].sort());
  });
});
