import type { PortOwnerKind } from '@sandcast/contracts';

/**
 * Where an open port is served: `<port>-sbx-<hex>.<base domain>` for a sandbox's,
 * `<port>-setup-<hex>.<base domain>` for a setup session's. The id's `_` becomes `-` so the name is
 * a valid DNS label (wildcard TLS certificates, real resolvers); the two prefixes never collide.
 */
export interface PortHostPolicy {
  /** SANDCAST_PORTS_BASE_DOMAIN, default `sandboxes.localhost` (RFC 6761: resolves to loopback). */
  baseDomain: string;
  /** `http` or `https`: SANDCAST_PORTS_URL_SCHEME, else SANDCAST_PUBLIC_URL's, else `http`. */
  scheme: 'http' | 'https';
  /** `:port` in URLs: SANDCAST_PUBLIC_URL's port when set, else the port the server listens on. */
  portSuffix: () => string;
}

export const DEFAULT_PORTS_BASE_DOMAIN = 'sandboxes.localhost';

/** Who a port belongs to: a sandbox (`sbx_…`) or a setup session's sandbox (`setup_…`). */
export interface PortOwner {
  kind: PortOwnerKind;
  id: string;
}

/** The id prefix of each kind of owner, which is also its label's. */
const PREFIX = { sandbox: 'sbx', setup: 'setup' } as const satisfies Record<PortOwner['kind'], string>;

const LABEL = /^([1-9][0-9]{0,4})-(sbx|setup)-([0-9a-f]{32})$/;

/** What a Host header names under the base domain: a port of an owner, a bad name there, or nothing of ours. */
export type PortHostMatch = { kind: 'port'; owner: PortOwner; port: number } | { kind: 'invalid' } | null;

export function matchPortHost(baseDomain: string, hostHeader: string | undefined): PortHostMatch {
  if (!hostHeader) return null;
  const hostname = hostHeader
    .toLowerCase()
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '');
  const suffix = `.${baseDomain}`;
  if (hostname === baseDomain) return { kind: 'invalid' };
  if (!hostname.endsWith(suffix)) return null;
  const label = LABEL.exec(hostname.slice(0, -suffix.length));
  if (!label) return { kind: 'invalid' };
  const port = Number(label[1]);
  if (port > 65535) return { kind: 'invalid' };
  const kind = label[2] === PREFIX.sandbox ? 'sandbox' : 'setup';
  return { kind: 'port', port, owner: { kind, id: `${PREFIX[kind]}_${label[3]}` } };
}

/** The origin a port is served at, e.g. `http://8080-sbx-3f2a….sandboxes.localhost:7420`. */
export function portOrigin(policy: PortHostPolicy, owner: PortOwner, port: number): string {
  return `${policy.scheme}://${port}-${owner.id.replace('_', '-')}.${policy.baseDomain}${policy.portSuffix()}`;
}
