import type { BridgeUpstreamBody, PutBridgeUpstreamBody } from '@sandcast/contracts';
import { type Principal, SandcastError } from '@sandcast/core';
import type { BridgeUpstreamRow, Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import type { ResolvedUpstream } from '../bridge/bridge-forwarder.ts';
import { recordActivity } from './activity.service.ts';
import { isEncryptedValue, type SecretBox } from './secrets.ts';

/** An upstream as the API answers it: everything but the credential. */
export function presentBridgeUpstream(row: BridgeUpstreamRow): BridgeUpstreamBody {
  return {
    name: row.name,
    baseUrl: row.baseUrl,
    allowedPaths: row.allowedPaths,
    hasCredential: true,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * The host bridge's upstreams, managed by admins. The credential is sealed with the server's
 * secret box before it is stored and opened only for the forwarder (`resolved`); it is never
 * answered, logged or recorded in activity.
 */
export function createBridgeUpstreamsService(deps: { store: Store; secrets: SecretBox; log?: FastifyBaseLogger | undefined }) {
  const { store } = deps;
  return {
    async list(): Promise<BridgeUpstreamRow[]> {
      return store.repos.bridgeUpstreams.list();
    },

    /** Creates or replaces `name`; a replace without a credential keeps the stored one. */
    async put(name: string, input: PutBridgeUpstreamBody, actor: Principal): Promise<BridgeUpstreamRow> {
      const credential =
        input.credential === undefined ? undefined : (deps.secrets.encrypt(input.credential) as unknown as Record<string, unknown>);
      return store.transaction(async (repos) => {
        const existed = (await repos.bridgeUpstreams.get(name)) !== null;
        const row = await repos.bridgeUpstreams.put({ name, baseUrl: input.baseUrl, allowedPaths: input.allowedPaths, credential });
        if (!row) {
          throw new SandcastError('validation_failed', `upstream ${name} does not exist yet: send its credential to create it`, {
            issues: [{ path: 'credential', message: 'required to create an upstream' }],
          });
        }
        await recordActivity(repos, {
          action: existed ? 'bridge_upstream.updated' : 'bridge_upstream.created',
          actor,
          subjectType: 'bridge_upstream',
          subjectId: name,
          details: { name, baseUrl: row.baseUrl, allowedPaths: row.allowedPaths, credentialChanged: credential !== undefined },
        });
        return row;
      });
    },

    async delete(name: string, actor: Principal): Promise<BridgeUpstreamRow> {
      return store.transaction(async (repos) => {
        const current = await repos.bridgeUpstreams.get(name);
        if (!current || !(await repos.bridgeUpstreams.delete(name))) {
          throw new SandcastError('not_found', `no bridge upstream named ${name}; GET /api/bridge/upstreams lists them`);
        }
        await recordActivity(repos, {
          action: 'bridge_upstream.deleted',
          actor,
          subjectType: 'bridge_upstream',
          subjectId: name,
          details: { name, baseUrl: current.baseUrl },
        });
        return current;
      });
    },

    /** Every upstream with its credential opened, for the forwarder only. */
    async resolved(): Promise<ResolvedUpstream[]> {
      const rows = await store.repos.bridgeUpstreams.list();
      return rows.flatMap((row) => {
        if (!isEncryptedValue(row.credential)) return [];
        let credential: unknown;
        try {
          credential = deps.secrets.decrypt(row.credential);
        } catch {
          // Sealed with another secret key: this upstream is unreachable (403) until an admin sets its credential again.
          deps.log?.warn({ upstream: row.name }, 'a bridge upstream credential cannot be opened with this server key; set it again');
          return [];
        }
        return typeof credential === 'string' ? [{ name: row.name, baseUrl: row.baseUrl, allowedPaths: row.allowedPaths, credential }] : [];
      });
    },
  };
}

export type BridgeUpstreamsService = ReturnType<typeof createBridgeUpstreamsService>;
