import { describe, expect, it } from 'vitest';
import { CONTENT_SCAN_LIMITS, contentScanCandidates, looksBinary, scanTextForSecrets, shannonEntropy } from './secret-content-scan.ts';
import { likelySecrets } from './secret-scan.ts';

const reasons = (path: string, text: string) => scanTextForSecrets(path, text).map((w) => `${w.line}: ${w.reason}`);

describe('scanTextForSecrets', () => {
  it('finds known key shapes with their line, never carrying the text', () => {
    const key = 'AKIAIOSFODNN7EXAMPLE';
    const text = [
      '# config',
      `aws_access_key_id = ${key}`,
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnop',
    ].join('\n');
    const found = scanTextForSecrets('/root/app.ini', text);
    expect(found.map((w) => `${w.line}: ${w.reason}`)).toEqual([
      '2: AWS access key id (AKIA…)',
      '3: private key',
      '4: GitHub fine-grained token (github_pat_…)',
    ]);
    expect(JSON.stringify(found)).not.toContain(key);
  });

  it('flags a high-entropy value assigned to a secret-sounding name, not placeholders or ordinary settings', () => {
    expect(reasons('/srv/app/.env.local', 'DB_PASSWORD=Xk9mQ2vLp7Rt4Wz8Nb3Hs6Yc1Fd5Gj0')).toEqual([
      '1: credential assigned to DB_PASSWORD',
    ]);
    expect(reasons('/srv/app/settings.py', 'API_KEY = "Qm8Zt3Lp9Wk2Rv7Ns5Bx1Hc4Jd6Fg0Ty"')).toEqual(['1: credential assigned to API_KEY']);
    expect(reasons('/srv/app/settings.py', 'API_KEY = "$API_KEY"\nTOKEN = "changeme"\nSECRET=<your secret>')).toEqual([]);
    expect(reasons('/srv/app/settings.py', 'TIMEOUT = 30\nauth_mode = "password"\nmax_tokens = 4096')).toEqual([]);
  });

  it('does not mistake lockfile integrity hashes or code for secrets', () => {
    const lock = '"integrity": "sha512-Qm8Zt3Lp9Wk2Rv7Ns5Bx1Hc4Jd6Fg0TyQm8Zt3Lp9Wk2Rv7Ns5Bx1Hc4Jd6Fg0Ty==",';
    expect(reasons('/workspace/package-lock.json', lock)).toEqual([]);
    expect(reasons('/workspace/src/index.ts', 'const tokenizer = createTokenizer({ keyPath: "/a/b" });')).toEqual([]);
  });

  it('treats exports in shell startup files as credentials when the name says so', () => {
    expect(reasons('/root/.profile', 'export PATH=$PATH:/opt/bin\nexport OPENAI_API_KEY=abc123def')).toEqual([
      '2: credential exported from a shell startup file (OPENAI_API_KEY)',
    ]);
  });

  it('caps findings per file and says how many more there were', () => {
    const text = Array.from({ length: 30 }, () => 'ghp_9fK2xQ7LmZ3vB8nR1tY6wP4sD0hJ5gC2aE7u').join('\n');
    const found = scanTextForSecrets('/root/tokens.txt', text);
    expect(found).toHaveLength(CONTENT_SCAN_LIMITS.maxFindingsPerFile + 1);
    expect(found.at(-1)).toEqual({ path: '/root/tokens.txt', reason: '10 more likely secrets in this file' });
  });

  it('measures entropy', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
  });
});

describe('contentScanCandidates', () => {
  const file = (path: string, sizeBytes: number | null = 100, kind = 'added', type = 'file') => ({ path, kind, type, sizeBytes });

  it('reads history and startup files first; skips deleted, large, binary and package files', () => {
    const { files, dropped } = contentScanCandidates([
      file('/workspace/a.js'),
      file('/root/.bash_history'),
      file('/usr/lib/x/y.py'),
      file('/workspace/big.json', CONTENT_SCAN_LIMITS.maxFileBytes + 1),
      file('/workspace/logo.png'),
      file('/workspace/gone.txt', 10, 'deleted'),
      file('/workspace/dir', null, 'added', 'directory'),
      file('/root/.bashrc', 50, 'modified'),
    ]);
    expect(files.map((f) => f.path)).toEqual(['/root/.bash_history', '/root/.bashrc', '/workspace/a.js']);
    expect(dropped).toBe(0);
  });

  it('stops at the file limit and counts what it dropped', () => {
    const many = Array.from({ length: CONTENT_SCAN_LIMITS.maxFiles + 5 }, (_, i) => file(`/workspace/f${i}.txt`));
    expect(contentScanCandidates(many)).toMatchObject({ dropped: 5 });
  });

  it('recognises binary bytes and shell history by name', () => {
    expect(looksBinary(new Uint8Array([104, 0, 105]))).toBe(true);
    expect(looksBinary(new TextEncoder().encode('plain text'))).toBe(false);
    expect(
      likelySecrets([file('/home/dev/.zsh_history'), file('/root/.python_history'), file('/root/.psql_history')]).map((w) => w.reason),
    ).toEqual([
      'shell history (commands typed during setup, often with tokens)',
      'shell history (commands typed during setup, often with tokens)',
      'shell history (commands typed during setup, often with tokens)',
    ]);
  });
});
