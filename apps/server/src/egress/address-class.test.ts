import { describe, expect, it } from 'vitest';
import { addressRefusal, parseIpLiteral, privateAllowances } from './address-class.ts';

const judge = (text: string) => {
  const address = parseIpLiteral(text);
  if (!address) return 'name';
  return addressRefusal(address) ?? 'public';
};

describe('the address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['127.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.1', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['fc00::1', 'private'],
    ['fdff:ffff::1', 'private'],
    ['100.64.0.1', 'shared_address_space'],
    ['100.127.255.255', 'shared_address_space'],
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['8.8.8.8', 'public'],
    ['172.15.0.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.63.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['example.com', 'name'],
    ['256.1.1.1', 'name'],
    ['1.2.3.4.5', 'name'],
    ['0x7g.1', 'name'],
  ])('%s is %s', (text, expected) => {
    expect(judge(text)).toBe(expected);
  });

  it('writes addresses in one canonical form', () => {
    expect(parseIpLiteral('0x7f.1')?.text).toBe('127.0.0.1');
    expect(parseIpLiteral('2130706433')?.text).toBe('127.0.0.1');
    expect(parseIpLiteral('[0:0::FFFF:7F00:1]')?.text).toBe('::ffff:7f00:1');
    expect(parseIpLiteral('fd00:ec2:0:0:0:0:0:254')?.text).toBe('fd00:ec2::254');
  });
});

describe('the private-address exceptions', () => {
  const v4 = (text: string) => parseIpLiteral(text)!;

  it('waives an exact host:port or an address inside a CIDR, nothing else', () => {
    const allow = privateAllowances(['10.9.0.2:8443', 'db.internal:5432', '192.168.7.0/24', '[fd00::5]:443']);
    expect(allow.allows('up.test', v4('10.9.0.2'), 8443)).toBe(true);
    expect(allow.allows('up.test', v4('10.9.0.2'), 8080)).toBe(false);
    expect(allow.allows('db.internal', v4('10.1.1.1'), 5432)).toBe(true);
    expect(allow.allows('db.internal', v4('10.1.1.1'), 5433)).toBe(false);
    expect(allow.allows('x', v4('192.168.7.200'), 1)).toBe(true);
    expect(allow.allows('x', v4('::ffff:192.168.7.9'), 1)).toBe(true);
    expect(allow.allows('x', v4('192.168.8.1'), 1)).toBe(false);
    expect(allow.allows('x', v4('fd00::5'), 443)).toBe(true);
    expect(privateAllowances([]).allows('x', v4('10.0.0.1'), 80)).toBe(false);
  });
});
