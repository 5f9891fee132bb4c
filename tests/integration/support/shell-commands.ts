/**
 * What the repository's shell scripts run, read from their text: the external commands they call
 * and the Debian packages they install. The check in scripts-install.test.ts holds the two
 * together: every command a script calls is either installed by some script or part of a base
 * Debian system, so the README's two commands work on a fresh machine.
 */

/** Shell words that are never external commands: keywords and bash builtins. */
const SHELL_WORDS = new Set(
  (
    'if then else elif fi for in do done while until case esac function select time ' +
    '! [[ ]] { } ( ) ;; : . [ source alias bg bind break builtin caller cd command compgen complete continue declare dirs ' +
    'disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile ' +
    'popd printf pushd pwd read readarray readonly return set shift shopt suspend test times trap true type typeset ' +
    'ulimit umask unalias unset wait'
  ).split(' '),
);

/** Words that run the command after them (their own options skipped). */
const WRAPPERS = new Set(['sudo', 'as_root', 'nohup', 'exec', 'env', 'timeout', 'command', 'xargs']);

interface Tokens {
  /** The code with quoted text removed and `$(…)`/backtick bodies kept as code. */
  code: string;
}

/** Removes comments and quoted text; keeps command substitutions (even inside double quotes) as code. */
function stripQuotesAndComments(text: string): Tokens {
  let out = '';
  let i = 0;
  const n = text.length;
  // Stack of contexts: 'code' (maybe nested in a $( ) with a depth), 'dq' (double quotes).
  const stack: Array<{ kind: 'code' | 'dq'; parens: number }> = [{ kind: 'code', parens: 0 }];
  while (i < n) {
    const top = stack[stack.length - 1]!;
    const c = text[i]!;
    if (top.kind === 'dq') {
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '"') {
        stack.pop();
        out += ' Q ';
        i++;
        continue;
      }
      if (c === '$' && text[i + 1] === '(' && text[i + 2] !== '(') {
        stack.push({ kind: 'code', parens: 0 });
        out += ' ; ';
        i += 2;
        continue;
      }
      i++;
      continue;
    }
    // code
    if (c === '\\') {
      out += text[i + 1] === '\n' ? ' ' : ' ';
      i += 2;
      continue;
    }
    if (c === '#' && (i === 0 || /[\s;&|(]/.test(text[i - 1]!))) {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      out += ' Q ';
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (c === '"') {
      stack.push({ kind: 'dq', parens: 0 });
      i++;
      continue;
    }
    if (c === '$' && text[i + 1] === '(' && text[i + 2] === '(') {
      // Arithmetic: no commands inside.
      const end = text.indexOf('))', i);
      out += ' Q ';
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (c === '$' && text[i + 1] === '{') {
      const end = text.indexOf('}', i);
      out += ' V ';
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (c === '$' && text[i + 1] === '(') {
      stack.push({ kind: 'code', parens: 0 });
      out += ' ; ';
      i += 2;
      continue;
    }
    if (c === '(') top.parens++;
    if (c === ')') {
      if (top.parens === 0 && stack.length > 1) {
        stack.pop();
        out += ' ; ';
        i++;
        continue;
      }
      top.parens--;
    }
    if (c === '`') {
      out += ' ; ';
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return { code: out };
}

/** The external commands a script calls: first words of simple commands, and names given to `command -v`. */
export function scriptCommands(text: string): Set<string> {
  const { code } = stripQuotesAndComments(text);
  const functions = new Set([...code.matchAll(/^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\s*\)/gm)].map((m) => m[1]!));
  const found = new Set<string>();
  for (const segment of code.split(/\n|;|&&|\|\||\||&|\(|\)|\{|\}|\bthen\b|\bdo\b|\belse\b|\belif\b|\bif\b|\bwhile\b|\buntil\b|!/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    let k = 0;
    // Assignments and redirections before the command.
    while (k < words.length && (/^[A-Za-z_]\w*=/.test(words[k]!) || /^\d*[<>]/.test(words[k]!))) k++;
    while (k < words.length) {
      const word = words[k]!;
      if (word === 'command' && words[k + 1] === '-v') {
        for (const name of words.slice(k + 2)) if (/^[\w.+-]+$/.test(name)) found.add(name);
        break;
      }
      // `$SUDO apt-get …`, `${SUDO:-} modprobe …`: a variable that may name a wrapper, then the command.
      if (word === 'V' || /^\$\w+$/.test(word)) {
        k++;
        continue;
      }
      if (WRAPPERS.has(word)) {
        k++;
        // The wrapper's options (timeout's duration, env's assignments) come before the command.
        while (k < words.length && (/^-/.test(words[k]!) || /^\d+[smh]?$/.test(words[k]!) || /^[A-Za-z_]\w*=/.test(words[k]!))) k++;
        continue;
      }
      if (word === 'for' || word === 'case' || word === 'in' || word === 'done' || word === 'fi' || word === 'esac') break;
      // A variable, a quoted word, a path or a function of the script: not a command to install.
      if (word === 'Q' || word.startsWith('$') || word.includes('/') || functions.has(word) || SHELL_WORDS.has(word)) break;
      if (/^[a-z][\w.+-]*$/.test(word)) found.add(word);
      break;
    }
  }
  return found;
}

/** Debian packages a script installs: after `apt_install`, after `apt-get install`, and `missing="$missing <pkg>"` lists. */
export function installedPackages(text: string): Set<string> {
  const packages = new Set<string>();
  // Quoted text (a message that says "apt-get install x") installs nothing.
  for (const code of stripQuotesAndComments(text).code.split('\n')) {
    const install = code.match(/(?:\bapt_install\b|\bapt-get\s+(?:[^\n]*\s)?install\b)([^;&|)}]*)/);
    if (install) {
      for (const word of install[1]!.trim().split(/\s+/)) {
        if (/^[a-z0-9][a-z0-9.+-]+$/.test(word)) packages.add(word);
      }
    }
  }
  for (const m of text.matchAll(/^[^#\n]*\bmissing="\$missing ([a-z0-9][a-z0-9.+-]+)"/gm)) packages.add(m[1]!);
  return packages;
}

/**
 * Which Debian package provides a command the scripts call. A command missing here fails the check:
 * add it with its package, and an install line for the package unless it is a base package.
 */
const COMMAND_PACKAGES: Record<string, string> = {
  // Decompressors image imports hand bzip2, xz and zstd archives to.
  bzip2: 'bzip2',
  xz: 'xz-utils',
  zstd: 'zstd',
  // Base system (Priority required/important on Debian 12).
  bash: 'bash',
  sh: 'dash',
  cat: 'coreutils',
  chmod: 'coreutils',
  chown: 'coreutils',
  cp: 'coreutils',
  cut: 'coreutils',
  date: 'coreutils',
  dd: 'coreutils',
  dirname: 'coreutils',
  basename: 'coreutils',
  head: 'coreutils',
  id: 'coreutils',
  ln: 'coreutils',
  ls: 'coreutils',
  mkdir: 'coreutils',
  mkfifo: 'coreutils',
  mktemp: 'coreutils',
  mv: 'coreutils',
  nproc: 'coreutils',
  readlink: 'coreutils',
  realpath: 'coreutils',
  rm: 'coreutils',
  seq: 'coreutils',
  sha256sum: 'coreutils',
  sleep: 'coreutils',
  sort: 'coreutils',
  stat: 'coreutils',
  tail: 'coreutils',
  tee: 'coreutils',
  touch: 'coreutils',
  tr: 'coreutils',
  uname: 'coreutils',
  wc: 'coreutils',
  grep: 'grep',
  sed: 'sed',
  awk: 'mawk',
  find: 'findutils',
  tar: 'tar',
  gzip: 'gzip',
  dpkg: 'dpkg',
  'apt-get': 'apt',
  'apt-cache': 'apt',
  su: 'util-linux',
  flock: 'util-linux',
  mount: 'mount',
  umount: 'mount',
  nsenter: 'util-linux',
  unshare: 'util-linux',
  losetup: 'mount',
  script: 'bsdutils',
  modprobe: 'kmod',
  ps: 'procps',
  hostname: 'hostname',
  which: 'debianutils',
  // Installed by the scripts.
  bwrap: 'bubblewrap',
  debootstrap: 'debootstrap',
  docker: 'docker.io',
  dockerd: 'docker.io',
  pg_isready: 'postgresql',
  psql: 'postgresql',
  chromium: 'chromium',
  ssh: 'openssh-client',
  'ssh-keygen': 'openssh-client',
  sshd: 'openssh-server',
  gcc: 'gcc',
  cc: 'gcc',
  make: 'make',
  ip: 'iproute2',
  curl: 'curl',
  mkfs: 'util-linux',
  'mkfs.ext4': 'e2fsprogs',
  'mkfs.xfs': 'xfsprogs',
};

/** Packages of a base Debian system (debootstrap's default variant, Priority required and important). */
const BASE_PACKAGES = new Set([
  'bash',
  'dash',
  'coreutils',
  'grep',
  'sed',
  'mawk',
  'findutils',
  'tar',
  'gzip',
  'dpkg',
  'apt',
  'util-linux',
  'mount',
  'bsdutils',
  'kmod',
  'procps',
  'hostname',
  'debianutils',
  'e2fsprogs',
]);

/**
 * What the README asks for before either command: Node.js 20 with npm (and so npx). `sudo` is used
 * only when the scripts do not run as root (as_root / $SUDO).
 */
const PREREQUISITES = new Set(['node', 'npm', 'npx', 'sudo']);

export interface UncoveredCommand {
  command: string;
  scripts: string[];
  why: string;
}

/** Commands called by `scripts` (path → text) that neither an install line nor the base system provides. */
export function uncoveredCommands(scripts: Record<string, string>): UncoveredCommand[] {
  const installed = new Set<string>();
  const usedBy = new Map<string, string[]>();
  for (const [path, text] of Object.entries(scripts)) {
    for (const pkg of installedPackages(text)) installed.add(pkg);
    for (const command of scriptCommands(text)) usedBy.set(command, [...(usedBy.get(command) ?? []), path]);
  }
  const problems: UncoveredCommand[] = [];
  for (const [command, paths] of [...usedBy].sort(([a], [b]) => a.localeCompare(b))) {
    if (PREREQUISITES.has(command)) continue;
    const pkg = COMMAND_PACKAGES[command];
    if (pkg === undefined) {
      problems.push({
        command,
        scripts: paths,
        why: `no package known for "${command}": add it to COMMAND_PACKAGES (tests/integration/support/shell-commands.ts) and install the package in a script`,
      });
    } else if (!BASE_PACKAGES.has(pkg) && !installed.has(pkg)) {
      problems.push({
        command,
        scripts: paths,
        why: `"${command}" comes from the ${pkg} package, which no script installs (add ${pkg} to an apt_install line)`,
      });
    }
  }
  return problems;
}
