/** A file a capture would bake into an image that looks like it holds a credential. */
export interface SecretWarning {
  path: string;
  /** The kind of secret ("GitHub token (ghp_/gho_/…)"), never the secret itself. */
  reason: string;
  /** 1-based line of a finding in the file's content; absent for findings by name. */
  line?: number;
}

/** Shell history files: what was typed during setup, tokens included. */
export const SHELL_HISTORY =
  /\/(\.(bash|zsh|sh|ksh|python|psql|mysql|node_repl|sqlite|rediscli|irb|php)_history|\.history|\.lesshst|fish_history)$/;

const RULES: Array<{ test: RegExp; reason: string }> = [
  { test: /\/\.ssh\/id_[^/]*$(?<!\.pub)/, reason: 'SSH private key' },
  { test: /\.(pem|key|p12|pfx)$/, reason: 'private key or certificate bundle' },
  { test: /\/\.aws\/credentials$/, reason: 'AWS credentials file' },
  {
    test: /\/\.config\/gcloud\/(credentials\.db|access_tokens\.db|application_default_credentials\.json|legacy_credentials\/.*)$/,
    reason: 'Google Cloud credentials',
  },
  { test: /\/\.azure\/(accessTokens\.json|msal_token_cache\.(json|bin))$/, reason: 'Azure credentials' },
  { test: /\/\.kube\/config$/, reason: 'Kubernetes credentials (kubeconfig)' },
  { test: /\/\.docker\/config\.json$/, reason: 'Docker registry credentials' },
  { test: /\/\.(npmrc|pypirc|netrc|git-credentials)$/, reason: 'package or git credentials' },
  { test: /\/\.config\/gh\/hosts\.yml$/, reason: 'GitHub CLI token' },
  { test: /\/\.(claude\/\.credentials\.json|codex\/auth\.json)$/, reason: 'coding agent login' },
  { test: /\/\.env(\.[^/]*)?$/, reason: 'environment file (often holds API keys)' },
  { test: SHELL_HISTORY, reason: 'shell history (commands typed during setup, often with tokens)' },
  { test: /(token|secret|credential|api[-_]?key)[^/]*$/i, reason: 'file name suggests a secret' },
];

/**
 * Flags changed files that likely hold secrets, so an operator can decide before a capture
 * bakes them into an image every run will boot from. Paths only: the content half is
 * scanTextForSecrets (secret-content-scan.ts).
 */
export function likelySecrets(changes: ReadonlyArray<{ path: string; kind: string; type: string }>): SecretWarning[] {
  const warnings: SecretWarning[] = [];
  for (const change of changes) {
    if (change.kind === 'deleted' || change.type !== 'file') continue;
    const rule = RULES.find((r) => r.test.test(change.path));
    if (rule) warnings.push({ path: change.path, reason: rule.reason });
  }
  return warnings;
}
