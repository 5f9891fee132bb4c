import { API_KEY_ROLES, DEPLOYMENT_MODES } from '@sandcast/core';
import { z } from 'zod';

/** Name of the httpOnly cookie that carries a web UI session. */
export const UI_SESSION_COOKIE = 'sandcast_session';

/**
 * Header a cookie-authenticated mutating request must carry. A cross-site form or script cannot
 * set it without a CORS preflight the server never grants, so it stops request forgery.
 */
export const CSRF_HEADER = 'x-sandcast-csrf';

export const LoginBodySchema = z.strictObject({ apiKey: z.string().min(1, 'paste an API key') });
export type LoginBody = z.infer<typeof LoginBodySchema>;

/** Who the caller is, and how the server knows. */
export const AuthSessionSchema = z.object({
  deploymentMode: z.enum(DEPLOYMENT_MODES),
  authenticated: z.boolean(),
  role: z.enum(API_KEY_ROLES).nullable(),
  /** `local`: local_trusted mode without a key; `cookie`: a web UI session; `bearer`: an API key header. */
  via: z.enum(['local', 'cookie', 'bearer']).nullable(),
  /** When the web UI session ends; null for other callers. */
  expiresAt: z.string().nullable(),
});
export type AuthSession = z.infer<typeof AuthSessionSchema>;

export const LogoutAnswerSchema = z.object({ loggedOut: z.boolean() });
