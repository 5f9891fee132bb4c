import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** How an encrypted value is stored inside a config document. */
export interface EncryptedValue {
  $encrypted: string;
}

export function isEncryptedValue(value: unknown): value is EncryptedValue {
  return value !== null && typeof value === 'object' && typeof (value as EncryptedValue).$encrypted === 'string';
}

/** AES-256-GCM with a random 96-bit nonce per value. Format: `v1.<nonce>.<tag>.<ciphertext>` (base64url). */
export interface SecretBox {
  encrypt(plaintext: unknown): EncryptedValue;
  decrypt(value: EncryptedValue): unknown;
  /** HMAC-SHA256 of `data` (base64url) under a key derived from the secret key for `purpose` alone. */
  sign(purpose: string, data: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    encrypt(plaintext) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const body = Buffer.concat([cipher.update(JSON.stringify(plaintext), 'utf8'), cipher.final()]);
      const parts = [nonce, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
      return { $encrypted: `v1.${parts.join('.')}` };
    },
    decrypt(value) {
      const [version, nonce, tag, body] = value.$encrypted.split('.');
      if (version !== 'v1' || !nonce || !tag || body === undefined) throw new Error('unrecognised encrypted value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8'));
    },
    sign(purpose, data) {
      const subkey = createHmac('sha256', key).update(`sandcast:${purpose}`).digest();
      return createHmac('sha256', subkey).update(data).digest('base64url');
    },
  };
}

/**
 * The instance's secret key: SANDCAST_SECRET_KEY when given (base64 of 32 bytes, for several
 * replicas sharing one database), else `<dataDir>/secret.key`, created with mode 0600.
 */
export async function loadSecretKey(options: { dataDir: string; configured: string | null }): Promise<Buffer> {
  if (options.configured) {
    const key = Buffer.from(options.configured, 'base64');
    if (key.length !== 32) throw new Error('SANDCAST_SECRET_KEY must be the base64 encoding of exactly 32 bytes');
    return key;
  }
  const file = path.join(options.dataDir, 'secret.key');
  try {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await chmod(file, 0o600);
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
}
