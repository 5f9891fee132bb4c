import { createHash, randomBytes } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ApiKeyRole, type Principal, SandcastError } from '@sandcast/core';
import type { ApiKeyRecord, Store } from '@sandcast/db';
import { recordActivity } from './activity.service.ts';

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A fresh key: `sc_` + 32 random bytes, base64url. */
const generateApiKey = (): string => `sc_${randomBytes(32).toString('base64url')}`;

/**
 * How long a key found active answers again from memory (ADR 0033). A revocation through this
 * server takes effect on its next request; one through another server sharing the database, within
 * this long.
 */
const AUTH_CACHE_MS = 1000;
/** Keys kept in memory at most; the oldest goes first. */
const AUTH_CACHE_ENTRIES = 10_000;

/** Bearer API keys. Only a SHA-256 hash is stored; the key is shown once, at creation. */
export function createApiKeysService({ store, cacheMs = AUTH_CACHE_MS }: { store: Store; cacheMs?: number }) {
  const lastTouched = new Map<string, number>();
  const known = new Map<string, { principal: Principal; until: number }>();
  const forgetKey = (keyId: string) => {
    for (const [hash, entry] of known) if (entry.principal.keyId === keyId) known.delete(hash);
  };
  return {
    async create(input: { name: string; role: ApiKeyRole }, actor: Principal): Promise<{ key: ApiKeyRecord; secret: string }> {
      const secret = generateApiKey();
      const key = await store.transaction(async (repos) => {
        const record = await repos.apiKeys.insert({
          name: input.name,
          role: input.role,
          keyHash: hashApiKey(secret),
          prefix: secret.slice(0, 10),
        });
        await recordActivity(repos, {
          action: 'api_key.created',
          actor,
          subjectType: 'api_key',
          subjectId: record.id,
          details: { name: input.name, role: input.role },
        });
        return record;
      });
      return { key, secret };
    },

    list: () => store.repos.apiKeys.list(),

    async revoke(id: string, actor: Principal): Promise<ApiKeyRecord> {
      forgetKey(id);
      const revoked = await store.transaction(async (repos) => {
        const record = await repos.apiKeys.revoke(id);
        if (!record) throw new SandcastError('not_found', `no API key with id ${id}; GET /api/keys lists them`);
        await recordActivity(repos, {
          action: 'api_key.revoked',
          actor,
          subjectType: 'api_key',
          subjectId: id,
          details: { name: record.name },
        });
        return record;
      });
      // Again after the commit: a request that read the key meanwhile may have remembered it.
      forgetKey(id);
      return revoked;
    },

    /** Which agents an agent key may start sessions for; every id must name an agent. */
    async setAllowedAgents(id: string, agentIds: string[], actor: Principal): Promise<ApiKeyRecord> {
      const unique = [...new Set(agentIds)];
      const key = await store.repos.apiKeys.get(id);
      if (!key) throw new SandcastError('not_found', `no API key with id ${id}; GET /api/keys lists them`);
      for (const agentId of unique) {
        if (!(await store.repos.agents.get(agentId))) {
          throw new SandcastError('unprocessable', `no agent with id ${agentId}; GET /api/agents lists them`, {
            issues: [{ path: 'allowedAgentIds', message: `no agent with id ${agentId}` }],
          });
        }
      }
      return store.transaction(async (repos) => {
        const record = (await repos.apiKeys.setAllowedAgents(id, unique))!;
        await recordActivity(repos, {
          action: 'api_key.agents_allowed',
          actor,
          subjectType: 'api_key',
          subjectId: id,
          details: { name: record.name, allowedAgentIds: unique, ignoredForRole: record.role === 'admin' },
        });
        return record;
      });
    },

    /** The principal a bearer key stands for, or null when it is unknown or revoked. */
    async authenticate(secret: string): Promise<Principal | null> {
      const hash = hashApiKey(secret);
      const now = Date.now();
      const cached = known.get(hash);
      if (cached && cached.until > now) return cached.principal;
      known.delete(hash);
      const record = await store.repos.apiKeys.findActiveByHash(hash);
      if (!record) return null;
      const principal: Principal = { role: record.role, keyId: record.id };
      if (cacheMs > 0) {
        known.set(hash, { principal, until: now + cacheMs });
        if (known.size > AUTH_CACHE_ENTRIES) known.delete(known.keys().next().value!);
      }
      // Record use at most once a minute per key, off the request path.
      if ((lastTouched.get(record.id) ?? 0) < now - 60_000) {
        lastTouched.set(record.id, now);
        void store.repos.apiKeys.touch(record.id).catch(() => undefined);
      }
      return principal;
    },

    /**
     * In authenticated mode a fresh instance has no key to log in with: create an admin key and
     * write it to `<dataDir>/admin-api-key` (mode 0600). Returns the file path, or null if keys exist.
     */
    async bootstrapAdminKey(dataDir: string): Promise<string | null> {
      if ((await store.repos.apiKeys.count()) > 0) return null;
      const { secret } = await this.create({ name: 'bootstrap admin', role: 'admin' }, { role: 'admin', keyId: null });
      const file = path.join(dataDir, 'admin-api-key');
      await writeFile(file, `${secret}\n`, { mode: 0o600 });
      await chmod(file, 0o600);
      return file;
    },
  };
}
