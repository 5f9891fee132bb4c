import { isIPv6 } from 'node:net';

/** An IP address as its bytes: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  family: 4 | 6;
  bytes: number[];
  /** The canonical text (dotted quad, or RFC 5952-ish lower-case IPv6) the proxy connects to. */
  text: string;
}

/** Why an address is never reached from a sandbox (the closed set of refusal reasons). */
export const ADDRESS_REFUSALS = [
  'loopback',
  'link_local',
  'private',
  'shared_address_space',
  'unspecified',
  'multicast',
  'reserved',
  'metadata',
] as const;
export type AddressRefusal = (typeof ADDRESS_REFUSALS)[number];

/**
 * Parses an IPv4 part the way `inet_aton` does (what a resolver does with a "name" like
 * `0x7f.1` or `2130706433`): decimal, `0x` hex or leading-zero octal. Null when it is not one.
 */
function atonPart(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]*$/.test(part)) return Number.parseInt(part, 8);
  if (/^[1-9][0-9]*$/.test(part)) return Number(part);
  return null;
}

/** IPv4 in any form `inet_aton` accepts (a, a.b, a.b.c, a.b.c.d), or null. */
function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return null;
  const values = parts.map(atonPart);
  if (values.some((v) => v === null || !Number.isFinite(v))) return null;
  const nums = values as number[];
  const last = nums.at(-1)!;
  const head = nums.slice(0, -1);
  if (head.some((v) => v > 255) || last >= 256 ** (4 - head.length)) return null;
  const bytes = [...head];
  for (let i = 4 - head.length - 1; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return bytes;
}

function parseIpv6(text: string): number[] | null {
  const zoneless = text.split('%')[0]!;
  if (!isIPv6(zoneless)) return null;
  let body = zoneless.toLowerCase();
  // A trailing dotted quad (::ffff:127.0.0.1) becomes two hex groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(body);
  if (quad) {
    const v4 = parseIpv4(quad[1]!)!;
    body = `${body.slice(0, quad.index)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [left, right] = body.includes('::') ? body.split('::') : [body, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const head = groups(left);
  const tail = groups(right);
  const fill = right === undefined ? [] : Array<string>(8 - head.length - tail.length).fill('0');
  const all = [...head, ...fill, ...tail];
  if (all.length !== 8) return null;
  return all.flatMap((g) => {
    const value = Number.parseInt(g, 16);
    return [value >> 8, value & 0xff];
  });
}

const v6Text = (bytes: number[]): string => {
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  // The longest run of zero groups (two or more) becomes "::".
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
};

/**
 * An IP literal as a client may write it (a CONNECT target, a Host, a URL): IPv4 in every
 * `inet_aton` form, IPv6 with or without brackets and zone. Null when `text` is a name.
 */
export function parseIpLiteral(text: string): IpAddress | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseIpv4(bare);
  if (v4) return { family: 4, bytes: v4, text: v4.join('.') };
  const v6 = parseIpv6(bare);
  if (v6) return { family: 6, bytes: v6, text: v6Text(v6) };
  return null;
}

function v4Refusal(b: number[]): AddressRefusal | null {
  const [a, c] = [b[0]!, b[1]!];
  if (a === 169 && c === 254 && b[2] === 169 && b[3] === 254) return 'metadata';
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 169 && c === 254) return 'link_local';
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168)) return 'private';
  if (a === 100 && c >= 64 && c <= 127) return 'shared_address_space';
  if (a >= 224 && a <= 239) return 'multicast';
  // 240/4 (reserved, the broadcast address included), 192.0.0/24 (protocol assignments), 198.18/15 (benchmarking).
  if (a >= 240 || (a === 192 && c === 0 && b[2] === 0) || (a === 198 && (c === 18 || c === 19))) return 'reserved';
  return null;
}

const isZero = (bytes: number[], from: number, to: number) => bytes.slice(from, to).every((x) => x === 0);

/**
 * Why a sandbox may not reach `address`, or null when it is a public address. IPv6 forms that
 * carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address they carry.
 */
export function addressRefusal(address: IpAddress): AddressRefusal | null {
  const b = address.bytes;
  if (address.family === 4) return v4Refusal(b);
  if (isZero(b, 0, 15) && b[15] === 0) return 'unspecified';
  if (isZero(b, 0, 15) && b[15] === 1) return 'loopback';
  if (isZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Refusal(b.slice(12)) ?? null;
  if (isZero(b, 0, 12)) return v4Refusal(b.slice(12)) ?? 'reserved';
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && isZero(b, 4, 12)) return v4Refusal(b.slice(12));
  if (b[0] === 0x20 && b[1] === 0x02) return v4Refusal(b.slice(2, 6));
  // fd00:ec2::254, the metadata service's IPv6 address on EC2.
  if (address.text === 'fd00:ec2::254') return 'metadata';
  if ((b[0]! & 0xfe) === 0xfc) return 'private';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link_local';
  // fec0::/10, the deprecated site-local range.
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private';
  if (b[0] === 0xff) return 'multicast';
  // 100::/64 (discard), 2001:db8::/32 (documentation).
  if ((b[0] === 0x01 && isZero(b, 1, 8)) || (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8)) return 'reserved';
  return null;
}

/** A CIDR range: `10.0.0.0/8`, `fd00::/8`, or one address. */
interface Cidr {
  network: IpAddress;
  prefix: number;
}

/** `a` inside `range` (the same family; an IPv4-mapped IPv6 address counts as its IPv4 address). */
function inCidr(a: IpAddress, range: Cidr): boolean {
  const address =
    a.family === 6 && isZero(a.bytes, 0, 10) && a.bytes[10] === 0xff && a.bytes[11] === 0xff
      ? { family: 4 as const, bytes: a.bytes.slice(12), text: a.bytes.slice(12).join('.') }
      : a;
  if (address.family !== range.network.family) return false;
  for (let bit = 0; bit < range.prefix; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((address.bytes[bit >> 3]! & mask) !== (range.network.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/**
 * The instance's exceptions to the private-address refusal (`egress.allowPrivateHosts`): exact
 * `host:port` pairs (a name or an IP literal, `[v6]:port`) and CIDR ranges. Empty by default.
 */
export interface PrivateAllowances {
  /** Whether connecting to `address` for the requested `host`:`port` is waived. */
  allows(host: string, address: IpAddress, port: number): boolean;
}

type Allowance = { kind: 'cidr'; cidr: Cidr } | { kind: 'exact'; host: string; ip: IpAddress | null; port: number };

function parseAllowance(entry: string): Allowance | null {
  const slash = entry.lastIndexOf('/');
  if (slash > 0) {
    const network = parseIpLiteral(entry.slice(0, slash));
    const prefixText = entry.slice(slash + 1);
    const prefix = Number(prefixText);
    if (!network || !/^\d{1,3}$/.test(prefixText) || prefix > (network.family === 4 ? 32 : 128)) return null;
    return { kind: 'cidr', cidr: { network, prefix } };
  }
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  const ip = parseIpLiteral(match[1]!);
  if (!ip && !/^[a-z0-9.-]+$/i.test(match[1]!)) return null;
  return { kind: 'exact', host: ip ? ip.text : match[1]!.toLowerCase().replace(/\.$/, ''), ip, port };
}

export function privateAllowances(entries: readonly string[]): PrivateAllowances {
  const parsed = entries.map(parseAllowance).filter((a): a is Allowance => a !== null);
  return {
    allows: (host, address, port) =>
      parsed.some((a) =>
        a.kind === 'cidr' ? inCidr(address, a.cidr) : a.port === port && (a.ip ? a.ip.text === address.text : a.host === host),
      ),
  };
}
