/**
 * Where a sandbox's open port is served: `<port>-sbx-<hex>.<base domain>`. The sandbox id's `_`
 * becomes `-` so the name is a valid DNS label (wildcard TLS certificates, real resolvers).
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

const LABEL = /^([1-9][0-9]{0,4})-sbx-([0-9a-f]{32})$/;

/** What a Host header names under the base domain: a port of a sandbox, a bad name there, or nothing of ours. */
export type PortHostMatch = { kind: 'port'; sandboxId: string; port: number } | { kind: 'invalid' } | null;

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
  return { kind: 'port', port, sandboxId: `sbx_${label[2]}` };
}

/** The origin a port of a sandbox is served at, e.g. `http://8080-sbx-3f2a….sandboxes.localhost:7420`. */
export function portOrigin(policy: PortHostPolicy, sandboxId: string, port: number): string {
  return `${policy.scheme}://${port}-${sandboxId.replace('_', '-')}.${policy.baseDomain}${policy.portSuffix()}`;
}
