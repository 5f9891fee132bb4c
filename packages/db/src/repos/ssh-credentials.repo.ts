import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { sshGatewayCredentials } from '../schema.ts';

export interface SshCredentialRecord {
  id: string;
  setupSessionId: string;
  expiresAt: string;
}

/** The SSH gateway's usernames, one per setup session, stored only as hashes. */
export function createSshCredentialsRepo(db: Db) {
  return {
    async insert(input: { setupSessionId: string; credentialHash: string; expiresAt: Date }): Promise<SshCredentialRecord> {
      const [row] = await db
        .insert(sshGatewayCredentials)
        .values({ id: newId('sshc'), ...input })
        .returning();
      return { id: row!.id, setupSessionId: row!.setupSessionId, expiresAt: row!.expiresAt.toISOString() };
    },

    /** The credential with this hash, if it is neither revoked nor expired at `now`. */
    async findUsable(credentialHash: string, now: Date): Promise<SshCredentialRecord | null> {
      const rows = await db
        .select()
        .from(sshGatewayCredentials)
        .where(
          and(
            eq(sshGatewayCredentials.credentialHash, credentialHash),
            isNull(sshGatewayCredentials.revokedAt),
            sql`${sshGatewayCredentials.expiresAt} > ${now.toISOString()}`,
          ),
        );
      const row = rows[0];
      return row ? { id: row.id, setupSessionId: row.setupSessionId, expiresAt: row.expiresAt.toISOString() } : null;
    },

    /** Revokes every credential of a setup session (it ended). */
    async revokeForSession(setupSessionId: string, now: Date): Promise<void> {
      await db
        .update(sshGatewayCredentials)
        .set({ revokedAt: now })
        .where(and(eq(sshGatewayCredentials.setupSessionId, setupSessionId), isNull(sshGatewayCredentials.revokedAt)));
    },
  };
}
