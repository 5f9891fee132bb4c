import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../services/secrets.ts';
import type { PortOwner } from './port-hosts.ts';

/** How long a URL handed out by `GET …/ports/:port/url` may be first opened. */
export const PORT_URL_TOKEN_TTL_MS = 60 * 60 * 1000;
/** How long the cookie a browser gets for the URL lasts (closing the port ends it sooner). */
export const PORT_COOKIE_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * The opened port a token is bound to: its owner (kind and id, so a sandbox's token never opens a
 * setup session's port), its number, and its opening (reopening voids old tokens).
 */
export interface PortGrant {
  owner: PortOwner;
  port: number;
  openedAt: string;
}

const PURPOSE = 'port-token';
const payloadOf = (grant: PortGrant, expiresAtMs: number) =>
  `${grant.owner.kind}|${grant.owner.id}|${grant.port}|${grant.openedAt}|${expiresAtMs}`;

/** `<expiry ms, base 36>.<HMAC>`: bound to one owner, one port and one opening of it. */
export function issuePortToken(secrets: SecretBox, grant: PortGrant, expiresAtMs: number): string {
  return `${expiresAtMs.toString(36)}.${secrets.sign(PURPOSE, payloadOf(grant, expiresAtMs))}`;
}

/** Whether `token` grants `grant` at `nowMs`. */
export function verifyPortToken(secrets: SecretBox, grant: PortGrant, token: string, nowMs: number): boolean {
  const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return false;
  const expiresAtMs = Number.parseInt(match[1]!, 36);
  if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs <= nowMs) return false;
  const expected = Buffer.from(secrets.sign(PURPOSE, payloadOf(grant, expiresAtMs)));
  const given = Buffer.from(match[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
