import { type SecretWarning, SHELL_HISTORY } from './secret-scan.ts';

/**
 * The content half of the capture review's secret scan: which changed files are worth reading,
 * and what in their text looks like a credential. Pure: the service reads the files (bounded by
 * CONTENT_SCAN_LIMITS) and hands the text here. A finding names the file, the line and the kind of
 * secret, never the secret itself.
 */
export const CONTENT_SCAN_LIMITS = {
  /** Files larger than this are not read (credentials live in small text files). */
  maxFileBytes: 256 * 1024,
  /** Bytes read over all files of one review. */
  maxTotalBytes: 4 * 1024 * 1024,
  /** Files read in one review. */
  maxFiles: 400,
  /** Findings reported per file; the rest are summed up in one line. */
  maxFindingsPerFile: 20,
} as const;

const SHELL_STARTUP =
  /\/(\.(bashrc|bash_profile|bash_login|profile|zshrc|zshenv|zprofile|kshrc|mkshrc)|etc\/environment|etc\/profile|etc\/profile\.d\/[^/]+|etc\/bash\.bashrc)$/;
/** Files whose bytes are not text worth scanning. */
const BINARY_NAME =
  /\.(so(\.\d+)*|a|o|node|wasm|pyc|class|jar|png|jpe?g|gif|ico|webp|pdf|zip|gz|tgz|xz|bz2|zst|7z|deb|rpm|whl|woff2?|ttf|otf|mo|db|sqlite3?)$/i;
/** Trees where package managers put files nobody typed a secret into. */
const PACKAGE_TREES = /^\/(usr|lib|lib32|lib64|bin|sbin|opt\/[^/]+\/lib|var\/lib\/(apt|dpkg)|var\/cache|var\/log\/apt)\//;

/**
 * Which changed files to read, most telling first (shell history and startup files, then the
 * rest in listing order), within the count limit; `dropped` counts those cut at the limit.
 * Deleted, non-regular, large, binary-named and package-manager files never qualify.
 */
export function contentScanCandidates<T extends { path: string; kind: string; type: string; sizeBytes: number | null }>(
  changes: readonly T[],
): { files: T[]; dropped: number } {
  const eligible = changes.filter(
    (c) =>
      c.kind !== 'deleted' &&
      c.type === 'file' &&
      c.sizeBytes !== null &&
      c.sizeBytes > 0 &&
      c.sizeBytes <= CONTENT_SCAN_LIMITS.maxFileBytes &&
      !BINARY_NAME.test(c.path) &&
      !PACKAGE_TREES.test(c.path),
  );
  const telling = (c: T) => (SHELL_HISTORY.test(c.path) || SHELL_STARTUP.test(c.path) ? 0 : 1);
  const ordered = eligible
    .map((c, index) => ({ c, index }))
    .sort((a, b) => telling(a.c) - telling(b.c) || a.index - b.index)
    .map(({ c }) => c);
  return { files: ordered.slice(0, CONTENT_SCAN_LIMITS.maxFiles), dropped: Math.max(0, ordered.length - CONTENT_SCAN_LIMITS.maxFiles) };
}

/** True when the bytes look binary (a NUL in the first 8 KiB): such files are not scanned. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

const PATTERNS: Array<{ test: RegExp; reason: string }> = [
  { test: /-----BEGIN ((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----/, reason: 'private key' },
  { test: /\bsk-ant-[A-Za-z0-9_-]{20,}/, reason: 'Anthropic API key (sk-ant-…)' },
  { test: /\bsk-(proj-|svcacct-)?[A-Za-z0-9_-]{20,}/, reason: 'API key (sk-…)' },
  { test: /\bgh[pousr]_[A-Za-z0-9]{30,}/, reason: 'GitHub token (ghp_/gho_/…)' },
  { test: /\bgithub_pat_[A-Za-z0-9_]{22,}/, reason: 'GitHub fine-grained token (github_pat_…)' },
  { test: /\bglpat-[A-Za-z0-9_-]{20,}/, reason: 'GitLab token (glpat-…)' },
  { test: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/, reason: 'AWS access key id (AKIA…)' },
  { test: /\bAWS_SECRET_ACCESS_KEY\s*[=:]\s*["']?[A-Za-z0-9/+=]{16,}/, reason: 'AWS secret access key' },
  { test: /\bxox[abposr]-[A-Za-z0-9-]{10,}/, reason: 'Slack token (xox…-)' },
  { test: /\bAIza[0-9A-Za-z_-]{35}\b/, reason: 'Google API key (AIza…)' },
  { test: /\bnpm_[A-Za-z0-9]{36}\b/, reason: 'npm token (npm_…)' },
  { test: /\bhf_[A-Za-z0-9]{30,}\b/, reason: 'Hugging Face token (hf_…)' },
  { test: /\b(pypi-AgE|sk_live_|rk_live_)[A-Za-z0-9_-]{16,}/, reason: 'package registry or payment API token' },
];

/** `NAME=value` / `name: value` where the name says it holds a secret. */
const SECRET_ASSIGNMENT =
  /\b(?:export\s+)?((?:[A-Za-z_][A-Za-z0-9_.-]*)?(?:api[_-]?key|apikey|token|secret|passw(?:or)?d|credentials?|auth)[A-Za-z0-9_]*)["']?\s*[=:]\s*["']?([^\s"'#;]+)/i;
const BEARER = /\bBearer\s+([A-Za-z0-9._~+/=-]{20,})/;
const TOKEN_CANDIDATE = /[A-Za-z0-9+/_=-]{32,}/g;

/** Bits per character of a string's own symbol distribution. */
export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A random-looking token: long, mixed character classes, high entropy (not a path, a hash name, or a word). */
function isHighEntropyToken(token: string): boolean {
  if (token.length < 20 || /^[a-z_-]+$/i.test(token) || /^[0-9]+$/.test(token)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(token)).length;
  if (/^[0-9a-f]+$/i.test(token)) return token.length >= 32 && shannonEntropy(token) > 3.5;
  return classes >= 2 && shannonEntropy(token) > 4.0;
}

/** A placeholder an example file carries, not a credential. */
const PLACEHOLDER = /^(\$\{?[A-Za-z_]|<|x{6,}|\*{3,}|changeme|example|your[_-]|dummy|test|none|null|true|false|""|'')/i;

function findingOnLine(line: string, inStartupFile: boolean): string | null {
  for (const pattern of PATTERNS) if (pattern.test.test(line)) return pattern.reason;
  const bearer = BEARER.exec(line);
  if (bearer?.[1] && isHighEntropyToken(bearer[1])) return 'bearer token';
  const assignment = SECRET_ASSIGNMENT.exec(line);
  if (assignment?.[1] && assignment[2] && !PLACEHOLDER.test(assignment[2])) {
    const name = assignment[1].slice(0, 60);
    if (inStartupFile && /^\s*export\s/.test(line)) return `credential exported from a shell startup file (${name})`;
    if (isHighEntropyToken(assignment[2]) || inStartupFile) return `credential assigned to ${name}`;
  }
  // A random-looking token next to a word that says what it is.
  if (/key|token|secret|passw|auth|credential/i.test(line) && !/integrity|sha(1|256|384|512)|checksum|digest/i.test(line)) {
    for (const token of line.match(TOKEN_CANDIDATE) ?? []) if (isHighEntropyToken(token)) return 'high-entropy token';
  }
  return null;
}

/**
 * Scans one file's text. Each finding carries the 1-based line and the kind; the secret's text
 * never leaves this function. (Shell history is flagged by name as well, in likelySecrets.)
 */
export function scanTextForSecrets(path: string, text: string, options: { shellScript?: boolean } = {}): SecretWarning[] {
  // A script that runs on every boot is read like a shell startup file: any credential assignment counts.
  const startup = options.shellScript === true || SHELL_STARTUP.test(path);
  const history = SHELL_HISTORY.test(path);
  const findings: SecretWarning[] = [];
  let more = 0;
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    // Long minified lines are code, not configuration; scan their start only.
    const reason = findingOnLine(line.length > 4096 ? line.slice(0, 4096) : line, startup || history);
    if (!reason) continue;
    if (findings.length < CONTENT_SCAN_LIMITS.maxFindingsPerFile) findings.push({ path, line: index + 1, reason });
    else more++;
  }
  if (more > 0) findings.push({ path, reason: `${more} more likely secrets in this file` });
  return findings;
}
