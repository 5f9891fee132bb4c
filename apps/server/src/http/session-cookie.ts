import { UI_SESSION_COOKIE } from '@sandcast/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The web UI session token from the Cookie header, if any. */
export function readSessionCookie(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== UI_SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
  }
  return null;
}

/**
 * httpOnly so page scripts cannot read it, SameSite=Strict so other sites cannot send it, Secure
 * when the request came over TLS (directly or through a proxy that says so).
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expiresAt: string): void {
  const maxAge = Math.max(0, Math.round((Date.parse(expiresAt) - Date.now()) / 1000));
  reply.header('set-cookie', cookie(request, `${UI_SESSION_COOKIE}=${token}`, `Max-Age=${maxAge}`));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, `${UI_SESSION_COOKIE}=`, 'Max-Age=0'));
}

function cookie(request: FastifyRequest, ...parts: string[]): string {
  const secure = request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
  return [...parts, 'Path=/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])].join('; ');
}
