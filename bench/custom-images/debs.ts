/**
 * A real toolset for the custom-image benchmark, installable with no network inside the sandbox:
 * the Debian packages of TOOLS and their dependency closure, downloaded once per machine on the
 * host with apt (cached under `${XDG_CACHE_HOME:-~/.cache}/sandcast-bench/debs`), then sent into a
 * sandbox through exec and installed with dpkg. The sandbox images (the local base and the Docker
 * test image) are Debian bookworm minbase, so dpkg is there and most of the closure's base
 * libraries are already installed; only the missing packages are sent.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecBody, ExecResultBody } from '@sandcast/contracts';

const run = promisify(execFile);

/** What an agent sandbox typically needs; the figures are for this set. */
export const TOOLS = ['git', 'python3', 'make', 'gcc', 'jq', 'curl'];
/** The command that proves the tools work, run after the install and after booting the captured image. */
export const VERIFY = [
  'sh',
  '-c',
  "git --version && python3 -c 'print(1)' && make --version >/dev/null && gcc --version >/dev/null && jq --version && curl --version >/dev/null",
];

interface Deb {
  file: string;
  /** The package name (the file name's first field, as `apt-get download` writes it). */
  pkg: string;
  /** The version (the file name's second field, `:` written `%3a`). */
  version: string;
  bytes: number;
}

export interface DebSet {
  dir: string;
  debs: Deb[];
}

const CACHE = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'sandcast-bench', 'debs', TOOLS.join('-'));

async function requireTool(name: string, hint: string) {
  try {
    await run('sh', ['-c', `command -v ${name}`]);
  } catch {
    throw new Error(`the custom-image benchmark needs \`${name}\` on the host to build its .deb set: ${hint}`);
  }
}

/** The cached set, building it first when this machine has none (needs apt and a Debian mirror). */
export async function debSet(): Promise<DebSet> {
  const present = await readdir(CACHE).catch(() => [] as string[]);
  if (!present.includes('complete')) {
    const hint = 'run it on a Debian or Ubuntu host with apt (apt-get, apt-cache, dpkg-deb) and a reachable mirror';
    for (const tool of ['apt-get', 'apt-cache', 'dpkg-deb']) await requireTool(tool, hint);
    console.error(`building the .deb set of ${TOOLS.join(', ')} in ${CACHE} (once per machine)`);
    const closure = await run(
      'apt-cache',
      [
        'depends',
        '--recurse',
        '--no-recommends',
        '--no-suggests',
        '--no-conflicts',
        '--no-breaks',
        '--no-replaces',
        '--no-enhances',
        ...TOOLS,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    // Top-level lines are package names; indented ones are the relations, `<virtual>` ones have no .deb.
    const names = [...new Set(closure.stdout.split('\n').filter((line) => /^[a-z0-9][a-z0-9+.-]+$/.test(line)))];
    await mkdir(path.dirname(CACHE), { recursive: true });
    const staging = await mkdtemp(`${CACHE}.partial-`);
    try {
      await run('apt-get', ['download', ...names], { cwd: staging, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw new Error(
        `apt-get download of ${names.length} packages failed (is a Debian mirror reachable? \`apt-get update\` first): ${error}`,
      );
    }
    await writeFile(path.join(staging, 'complete'), `${names.join('\n')}\n`);
    await rm(CACHE, { recursive: true, force: true });
    await rename(staging, CACHE);
  }
  const files = (await readdir(CACHE)).filter((f) => f.endsWith('.deb')).sort();
  const debs = await Promise.all(
    files.map(async (file) => {
      const [pkg = file, version = ''] = file.split('_');
      return { file, pkg, version: decodeURIComponent(version), bytes: (await stat(path.join(CACHE, file))).size };
    }),
  );
  return { dir: CACHE, debs };
}

type Exec = (body: ExecBody) => Promise<ExecResultBody>;

async function checked(exec: Exec, body: ExecBody, what: string): Promise<ExecResultBody> {
  const out = await exec({ timeoutMs: 600_000, ...body });
  if (out.exitCode !== 0) throw new Error(`${what} exited ${out.exitCode}: ${out.stderr.slice(-2000)}`);
  return out;
}

/** Base64 bytes per exec: four arguments of 65,000 characters stay under the argv bound (EXEC_LIMITS). */
const ARGS_PER_EXEC = 4;
const ARG_CHARS = 65_000;
const BYTES_PER_EXEC = (ARGS_PER_EXEC * ARG_CHARS * 3) / 4;
const DROP = '/var/tmp/sandcast-bench-debs';

/**
 * Installs the set the way an operator without a network would: ask the sandbox which packages it
 * has, send the missing .debs as one tar through exec (the API has no file upload for setup or
 * plain sandboxes), skip any already installed, `dpkg -i` the rest, verify. Returns what was sent.
 */
export async function installDebs(exec: Exec, set: DebSet): Promise<{ packages: number; bytes: number; execs: number }> {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax, not a JavaScript template
  const format = '${db:Status-Status} ${Package} ${Version}\n';
  const listed = await checked(exec, { command: ['dpkg-query', '-W', '-f', format] }, 'dpkg-query');
  const installed = new Set(
    listed.stdout
      .split('\n')
      .filter((line) => line.startsWith('installed '))
      .map((line) => {
        const [, pkg, version] = line.split(' ');
        return `${pkg?.split(':')[0]} ${version}`;
      }),
  );
  // Same package at another version: the closure's exact dependencies (perl = perl-base's version) need the set's.
  const missing = set.debs.filter((d) => !installed.has(`${d.pkg} ${d.version}`));
  if (missing.length === 0) throw new Error('every package of the set is already installed: the benchmark would measure nothing');
  const tar = (await run('tar', ['-cf', '-', '-C', set.dir, ...missing.map((d) => d.file)], { encoding: 'buffer', maxBuffer: 1 << 30 }))
    .stdout;
  await checked(exec, { command: ['sh', '-c', `rm -rf ${DROP} && mkdir -p ${DROP}`] }, 'preparing the drop directory');
  let execs = 2;
  for (let at = 0; at < tar.length; at += BYTES_PER_EXEC) {
    const text = tar.subarray(at, at + BYTES_PER_EXEC).toString('base64');
    const parts: string[] = [];
    for (let i = 0; i < text.length; i += ARG_CHARS) parts.push(text.slice(i, i + ARG_CHARS));
    await checked(exec, { command: ['sh', '-c', `printf %s "$@" | base64 -d >> ${DROP}/set.tar`, 'sh', ...parts] }, 'sending the .deb set');
    execs++;
  }
  const install =
    `cd ${DROP} && tar -xf set.tar && rm set.tar || exit 1; ` +
    // A package the image already has at the set's version is skipped, whatever the host thought.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax, not a JavaScript template
    'have() { [ "$(dpkg-query -W -f \'${db:Status-Status} ${Version}\' "$(dpkg-deb -f "$1" Package)" 2>/dev/null)" = "installed $(dpkg-deb -f "$1" Version)" ]; }; ' +
    'left() { for f in *.deb; do have "$f" || echo "$f"; done; }; ' +
    // dpkg -i of a whole set does not order pre-dependencies (python3-minimal before python3): a few
    // passes over what is left, each installing what the previous ones made possible.
    'for pass in 1 2 3 4 5; do l=$(left); [ -z "$l" ] && break; DEBIAN_FRONTEND=noninteractive dpkg -i $l >/dev/null 2>dpkg.err; done; ' +
    'l=$(left); if [ -n "$l" ]; then cat dpkg.err >&2; exit 1; fi; ' +
    `cd / && rm -rf ${DROP}`;
  await checked(exec, { command: ['sh', '-c', install] }, 'dpkg -i of the .deb set');
  await checked(exec, { command: VERIFY }, 'the installed tools');
  return { packages: missing.length, bytes: tar.length, execs: execs + 2 };
}
