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

/** Bearer API keys. Only a SHA-256 hash is stored; the key is shown once, at creation. */
export function createApiKeysService({ store }: { store: Store }) {
  const lastTouched = new Map<string, number>();
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
      return store.transaction(async (repos) => {
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
      const record = await store.repos.apiKeys.findActiveByHash(hashApiKey(secret));
      if (!record) return null;
      const now = Date.now();
      // Record use at most once a minute per key, off the request path.
      if ((lastTouched.get(record.id) ?? 0) < now - 60_000) {
        lastTouched.set(record.id, now);
        void store.repos.apiKeys.touch(record.id).catch(() => undefined);
      }
      return { role: record.role, keyId: record.id };
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
