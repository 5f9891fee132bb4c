import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssh2 from 'ssh2';

/**
 * Reads an OpenSSH private key from `file`, creating an ed25519 one (mode 0600, with its `.pub`
 * beside it) when there is none. Used for the gateway's host key and for Sandcast's own SSH client
 * identity, both kept in the data directory so they survive restarts.
 */
async function loadOrCreateSshKey(file: string, comment: string): Promise<{ privateKey: string; publicKey: string }> {
  try {
    const privateKey = await readFile(file, 'utf8');
    const publicKey = await readFile(`${file}.pub`, 'utf8').catch(() => publicKeyOf(privateKey, comment));
    return { privateKey, publicKey: publicKey.trim() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const pair = generateParsableKeyPair(comment);
  // Written under a temporary name and renamed, so a crash never leaves half a key behind.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, pair.private, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
  await writeFile(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 });
  return { privateKey: pair.private, publicKey: pair.public.trim() };
}

/**
 * ssh2's generator now and then emits an ed25519 key its own parser then rejects ("Malformed
 * OpenSSH private key"); a key that does not parse back is generated again.
 */
export function generateParsableKeyPair(comment: string): { private: string; public: string } {
  for (let attempt = 0; attempt < 8; attempt++) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519', { comment });
    if (!(ssh2.utils.parseKey(pair.private) instanceof Error)) return pair;
  }
  throw new Error('could not generate an SSH key that parses back; check the ssh2 package');
}

function publicKeyOf(privateKey: string, comment: string): string {
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  return `${key.type} ${key.getPublicSSH().toString('base64')} ${comment}`;
}

/** The key's SHA-256 fingerprint as OpenSSH prints it: `SHA256:` and unpadded base64. */
export function sshFingerprint(publicKeyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKeyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** Sandcast's own SSH client key (`<dataDir>/ssh/client_ed25519`), offered to providers' SSH endpoints. */
export function sshClientIdentity(dataDir: string): () => Promise<string> {
  let loading: Promise<string> | null = null;
  return () => {
    loading ??= loadOrCreateSshKey(path.join(dataDir, 'ssh', 'client_ed25519'), 'sandcast-terminal').then((key) => key.privateKey);
    return loading;
  };
}

/** The gateway's host key (`<dataDir>/ssh/gateway_host_ed25519_key`, mode 0600), created on first start. */
export function loadGatewayHostKey(dataDir: string): Promise<{ privateKey: string; publicKey: string }> {
  return loadOrCreateSshKey(path.join(dataDir, 'ssh', 'gateway_host_ed25519_key'), 'sandcast-ssh-gateway');
}
