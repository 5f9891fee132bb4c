import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '@sandcast/core';

/** What a bridge token stands for: one sandbox, the session it serves, and who that session acts as. */
export interface BridgeBinding {
  sandboxId: string;
  sessionId: string;
  /** The principal that started the session: requests through the bridge act as it, nothing more. */
  principal: Principal;
}

const hash = (token: string) => createHash('sha256').update(token).digest();

/**
 * Bridge tokens: random, one per sandbox, kept only as a SHA-256 hash (the plaintext goes into the
 * sandbox once and nowhere else), revoked when the sandbox's bridge stops. They live in memory:
 * a bridge never outlives the server that runs it, and a restarted server issues new ones when
 * it starts the bridge again.
 */
export function createBridgeTokens() {
  const bySandbox = new Map<string, { digest: Buffer; binding: BridgeBinding }>();
  return {
    /** A new token for the sandbox; its previous one stops working. */
    issue(binding: BridgeBinding): string {
      const token = `scbt_${randomBytes(32).toString('base64url')}`;
      bySandbox.set(binding.sandboxId, { digest: hash(token), binding });
      return token;
    },
    /** The binding of `token` when it is the live token of `sandboxId`. */
    verify(sandboxId: string, token: string | null): BridgeBinding | null {
      const entry = bySandbox.get(sandboxId);
      if (!entry || !token) return null;
      return timingSafeEqual(entry.digest, hash(token)) ? entry.binding : null;
    },
    revoke(sandboxId: string): void {
      bySandbox.delete(sandboxId);
    },
  };
}

export type BridgeTokens = ReturnType<typeof createBridgeTokens>;

/**
 * One-shot tickets that carry a bridged request's principal into the in-process `inject` call
 * (the `x-sandcast-bridge-ticket` header). Each is random, redeemable once, and only the
 * forwarder mints them; a ticket from outside matches nothing.
 */
export function createBridgeTickets() {
  const tickets = new Map<string, Principal>();
  return {
    mint(principal: Principal): string {
      const ticket = randomBytes(24).toString('base64url');
      tickets.set(ticket, principal);
      return ticket;
    },
    redeem(ticket: string): Principal | null {
      const principal = tickets.get(ticket) ?? null;
      tickets.delete(ticket);
      return principal;
    },
    /** A ticket whose request never reached the hook (a refused route) is dropped. */
    discard(ticket: string): void {
      tickets.delete(ticket);
    },
  };
}

export type BridgeTickets = ReturnType<typeof createBridgeTickets>;

export const BRIDGE_TICKET_HEADER = 'x-sandcast-bridge-ticket';
