import { z } from 'zod';
import { API_PATHS } from './paths.ts';

/** Who may open a port's URL: `private` needs a credential, `public` needs none (an instance setting allows it). */
export const PORT_VISIBILITIES = ['private', 'public'] as const;
export type PortVisibility = (typeof PORT_VISIBILITIES)[number];

/** A TCP port number: 1–65535, an integer. */
export const PortNumberSchema = z
  .number({ error: 'port must be a whole number from 1 to 65535' })
  .int('port must be a whole number from 1 to 65535')
  .min(1, 'port must be a whole number from 1 to 65535')
  .max(65535, 'port must be a whole number from 1 to 65535');

/** A port in a URL path: digits only, no sign, no leading zero, 1–65535. */
export const PortParamSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,4}$/, 'the port in the path must be a whole number from 1 to 65535')
  .transform(Number)
  .pipe(PortNumberSchema);

export const OpenPortBodySchema = z.strictObject({
  port: PortNumberSchema,
  /** Default `private`. */
  visibility: z.enum(PORT_VISIBILITIES).default('private'),
});
export type OpenPortBody = z.input<typeof OpenPortBodySchema>;

/** What every open port says of itself, whoever owns it (a sandbox, a setup session). */
const openPortFields = {
  port: z.number().int(),
  visibility: z.enum(PORT_VISIBILITIES),
  /** The port's address without a credential (a private one answers 401 until the token is given). */
  baseUrl: z.string(),
  createdAt: z.string(),
};

export const SandboxPortSchema = z.object({ sandboxId: z.string(), ...openPortFields });
export type SandboxPort = z.infer<typeof SandboxPortSchema>;
export const SandboxPortListSchema = z.object({ ports: z.array(SandboxPortSchema) });

/** A port of a setup session's sandbox (the "Configure image" flow), served like a sandbox's. */
export const SetupSessionPortSchema = z.object({ sessionId: z.string(), ...openPortFields });
export type SetupSessionPort = z.infer<typeof SetupSessionPortSchema>;
export const SetupSessionPortListSchema = z.object({ ports: z.array(SetupSessionPortSchema) });

/** An open port as both UIs show it, without naming its owner. */
export type OpenPort = Omit<SandboxPort, 'sandboxId'>;

/**
 * Each owner of ports: the path parameter naming it, its three paths and its answers. The
 * server's routes, the OpenAPI operations and the client are all built from this table.
 */
export const PORT_OWNERS = {
  sandbox: {
    param: 'id',
    paths: { list: API_PATHS.sandboxPorts, url: API_PATHS.sandboxPortUrl, one: API_PATHS.sandboxPort },
    item: SandboxPortSchema,
    list: SandboxPortListSchema,
  },
  setup: {
    param: 'sessionId',
    paths: { list: API_PATHS.setupSessionPorts, url: API_PATHS.setupSessionPortUrl, one: API_PATHS.setupSessionPort },
    item: SetupSessionPortSchema,
    list: SetupSessionPortListSchema,
  },
} as const;
export type PortOwnerKind = keyof typeof PORT_OWNERS;

/** `GET …/ports/:port/url`: a private port's URL carries a token that ends at `expiresAt`. */
export const PortUrlSchema = z.object({ url: z.string(), expiresAt: z.string().optional() });
export type PortUrl = z.infer<typeof PortUrlSchema>;

/** The query parameter a private port's URL carries its token in, once. */
export const PORT_TOKEN_PARAM = 'sandcast_token';
