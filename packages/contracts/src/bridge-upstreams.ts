import { z } from 'zod';

/** A slug: it is one path segment of `/upstreams/<name>/...` inside the sandbox. */
export const BridgeUpstreamNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'use 1-63 lowercase letters, digits or "-", starting with a letter or digit');

const PRINTABLE = /^[\x21-\x7e]+$/;

const BaseUrl = z
  .string()
  .max(2048)
  .regex(PRINTABLE, 'write the base URL without spaces or control characters')
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'write an absolute http:// or https:// URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'use an http:// or https:// URL' });
    else if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: 'leave credentials out of the URL; send them as `credential`' });
    else if (url.search || url.hash || value.includes('?') || value.includes('#'))
      ctx.addIssue({ code: 'custom', message: 'leave the query and fragment out of the base URL' });
  });

/**
 * An allowed path under the upstream: exact (`/user`) or a prefix ending in `/*` (`/repos/*`),
 * as the bridge policy matches them. No dot segments, no `//`, no query, no escapes.
 */
const AllowedPath = z
  .string()
  .max(512)
  .regex(/^\/[A-Za-z0-9._~!$&'()+,;=:@/*-]*$/, 'write a path starting with "/" of unreserved characters (no query, "%", "\\" or spaces)')
  .refine(
    (path) =>
      !path
        .slice(1)
        .split('/')
        .some((segment) => segment === '.' || segment === '..'),
    'leave "." and ".." segments out',
  )
  .refine((path) => !path.includes('//'), 'leave empty segments ("//") out')
  .refine((path) => !path.slice(0, -2).includes('*') && (!path.endsWith('*') || path.endsWith('/*')), 'use "*" only as a final "/*"');

export const PutBridgeUpstreamBodySchema = z.strictObject({
  baseUrl: BaseUrl,
  allowedPaths: z.array(AllowedPath).min(1).max(64),
  /** Write-only: sent as `Authorization: Bearer <credential>`, stored encrypted. Left out on a replace, the stored one stays. */
  credential: z.string().max(8192).regex(PRINTABLE, 'send the credential as printable characters without spaces').optional(),
});
export type PutBridgeUpstreamBody = z.input<typeof PutBridgeUpstreamBodySchema>;

export const BridgeUpstreamSchema = z.object({
  name: z.string(),
  baseUrl: z.string(),
  allowedPaths: z.array(z.string()),
  /** The credential itself never leaves the server. */
  hasCredential: z.literal(true),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type BridgeUpstreamBody = z.infer<typeof BridgeUpstreamSchema>;

export const BridgeUpstreamListSchema = z.object({ upstreams: z.array(BridgeUpstreamSchema) });
