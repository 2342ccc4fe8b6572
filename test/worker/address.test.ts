// The SSRF guard of the meta-tag fetcher. Every host is checked twice: as the URL parser hands it over and
// as written, so the guard holds even for a caller that never ran the string through `new URL()`.
import { describe, expect, it } from 'vitest';
import { forbiddenHost, parseIpv4, parseIpv6 } from '../../src/fetch/address.ts';

/** The hostname `new URL()` makes of a notation, or null when the URL parser refuses it outright. */
function normalised(notation: string): string | null {
  try {
    return new URL(`http://${notation}/`).hostname;
  } catch {
    return null;
  }
}

const hex = (bytes: Uint8Array | null) =>
  bytes === null ? null : [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('forbiddenHost refuses', () => {
  it.each([
    // IPv4, every range, in every notation the URL standard accepts.
    ['127.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0x7F.1', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['127.0.0.1.', 'loopback'],
    ['127.0.0.1..', 'loopback'],
    ['0.0.0.0', 'this network'],
    ['0', 'this network'],
    ['0x', 'this network'],
    ['10.1', 'private address (10.0.0.0/8)'],
    ['10.255.255.255', 'private address (10.0.0.0/8)'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private address (172.16.0.0/12)'],
    ['172.31.255.255', 'private address (172.16.0.0/12)'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.1.1', 'private address (192.168.0.0/16)'],
    ['3232235777', 'private address (192.168.0.0/16)'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // Numeric, yet no IPv4 address: never to be mistaken for a name.
    ['999.1.1.1', 'not a valid address'],
    ['1.2.3.4.5', 'not a valid address'],
    ['1.2.3.256', 'not a valid address'],
    ['4294967296', 'not a valid address'],
    ['08.0.0.1', 'not a valid address'],
    ['0x1g.0.0.1', 'not a valid address'],
    ['example.123', 'not a valid address'],
    ['127..0.1', 'not a valid address'],
    // IPv6, outside 2000::/3.
    ['[::]', 'unspecified'],
    ['[::1]', 'loopback'],
    ['[0:0:0:0:0:0:0:1]', 'loopback'],
    ['::1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'IPv4-mapped IPv6 address (::ffff:0:0/96) pointing at 127.0.0.1'],
    ['[::ffff:7f00:1]', 'pointing at 127.0.0.1'],
    ['[::FFFF:8.8.8.8]', 'mapped'],
    ['[::127.0.0.1]', 'IPv4-compatible'],
    ['[::a00:1]', 'IPv4-compatible'],
    ['[64:ff9b::10.0.0.1]', 'NAT64 address (64:ff9b::/96) pointing at 10.0.0.1'],
    ['[64:ff9b:1::1]', 'local-use NAT64'],
    ['[100::1]', 'discard'],
    ['[fc00::1]', 'unique local'],
    ['[fd12:3456:789a::1]', 'unique local'],
    ['[fe80::1]', 'link-local'],
    ['[febf:ffff::1]', 'link-local'],
    ['[fec0::1]', 'site-local'],
    ['[ff02::1]', 'multicast'],
    ['[1fff:ffff::1]', 'outside global unicast'],
    ['[4000::1]', 'outside global unicast'],
    ['[5f00::1]', 'outside global unicast'],
    // IPv6, the special-purpose blocks inside 2000::/3.
    ['[2001::1]', 'Teredo'],
    ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'Teredo'],
    ['[2001:2::1]', 'benchmarking'],
    ['[2001:10::1]', 'ORCHID'],
    ['[2001:20::1]', 'ORCHIDv2'],
    ['[2001:100::1]', 'IETF protocol assignment'],
    ['[2001:db8::1]', 'documentation address (2001:db8::/32)'],
    ['[2002:a00:1::1]', '6to4'],
    ['[3fff::1]', 'documentation address (3fff::/20)'],
    // Malformed IPv6.
    ['[::1', 'not a valid address'],
    ['[1::2::3]', 'not a valid address'],
    ['[1:2:3:4:5:6:7:8:9]', 'not a valid address'],
    ['[fe80::1%25eth0]', 'not a valid address'],
    ['[::ffff:127.1]', 'not a valid address'],
    // Local names.
    ['localhost', 'local name'],
    ['LOCALHOST', 'local name'],
    ['localhost.', 'local name'],
    ['api.localhost', 'local name'],
    ['intranet', 'local name'],
    ['metadata', 'local name'],
    ['printer.local', 'local name'],
    ['metadata.google.internal', 'local name'],
    ['db.localdomain', 'local name'],
    ['nas.home.arpa', 'local name'],
    ['1.0.0.127.in-addr.arpa', 'local name'],
    ['router.lan', 'local name'],
    ['wiki.intranet', 'local name'],
    ['hr.corp', 'local name'],
    ['hr.corp.', 'local name'],
    // IP literals in disguise.
    ['127.0.0.1.nip.io', 'embeds 127.0.0.1, a loopback'],
    ['app.10.0.0.5.sslip.io', 'embeds 10.0.0.5, a private'],
    ['10.0.0.5.sslip.io.', 'private'],
    ['169.254.169.254.nip.io', 'link-local'],
    ['127-0-0-1.sslip.io', 'embeds 127.0.0.1, a loopback'],
    ['192-168-1-1.example', 'embeds 192.168.1.1, a private'],
    ['customer-app-172-16-0-9.nip.io', 'embeds 172.16.0.9, a private'],
    ['7f000001.nip.io', 'embeds 127.0.0.1, a loopback'],
    ['app-0a000001.nip.io', 'embeds 10.0.0.1, a private'],
    ['--1.sslip.io', 'embeds ::1, a loopback'],
    ['fe80--1.sslip.io', 'link-local'],
    ['localtest.me', 'resolves to loopback'],
    ['www.localtest.me', 'resolves to loopback'],
    ['lvh.me', 'resolves to loopback'],
    ['a.b.lvh.me.', 'resolves to loopback'],
    ['vcap.me', 'resolves to loopback'],
    ['lacolhost.com', 'resolves to loopback'],
    ['x.lacolhost.com', 'resolves to loopback'],
  ])('%s (%s)', (notation, reason) => {
    expect(forbiddenHost(notation)).toContain(reason);
    const host = normalised(notation);
    if (host !== null) expect(forbiddenHost(host), `as ${host}`).toContain(reason);
  });

  it('refuses a hostname with characters no DNS name has', () => {
    for (const host of ['', '.', 'a b.com', 'exa%6dple.com', 'example.com/x', 'bücher.example']) {
      expect(forbiddenHost(host), JSON.stringify(host)).not.toBeNull();
    }
  });
});

describe('forbiddenHost allows', () => {
  it.each([
    'example.com',
    'example.com.',
    'EXAMPLE.COM',
    'sub.example.co.uk',
    'xn--bcher-kva.example',
    'bücher.example',
    'my-site--staging.example.org',
    // Hex-looking labels and double dashes are ordinary outside the wildcard-DNS services.
    'feedface.com',
    'cdn-7f000001.example.net',
    'ab--cd.example',
    'localhost.example.com',
    'local.example.com',
    '8.8.8.8',
    '8.8.8.8.nip.io',
    '1.1.1.1',
    '134744072',
    '0x08080808',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '[2606:4700:4700::1111]',
    '[2001:4860:4860::8888]',
    '[2001:200::1]',
    '[2001:db9::1]',
    '[2620:4f:8000::1]',
    '[3fff:1000::1]',
  ])('%s', (notation) => {
    const host = normalised(notation);
    // Names with non-ASCII letters are only ever seen after the URL parser has applied IDNA.
    if (/^[\x00-\x7f]*$/.test(notation)) expect(forbiddenHost(notation)).toBeNull();
    expect(host).not.toBeNull();
    expect(forbiddenHost(host!), `as ${host}`).toBeNull();
  });
});

/** Each host is not an address of this kind: `parse` gives null. */
const notParsed = (kind: string, parse: (host: string) => unknown, hosts: string[]) =>
  it.each(hosts)(`%j is not ${kind}`, (host) => {
    expect(parse(host)).toBeNull();
  });

describe('parseIpv4', () => {
  it.each([
    ['127.0.0.1', 0x7f000001],
    ['127.0.0.1.', 0x7f000001],
    ['2130706433', 0x7f000001],
    ['0177.0.0.1', 0x7f000001],
    ['0x7f.0.0.1', 0x7f000001],
    ['0X7F000001', 0x7f000001],
    ['017700000001', 0x7f000001],
    ['127.1', 0x7f000001],
    ['10.1.258', 0x0a010102],
    ['1.16777215', 0x01ffffff],
    ['0x', 0],
    ['0', 0],
    ['00', 0],
    ['4294967295', 0xffffffff],
    ['255.255.255.255', 0xffffffff],
  ])('%s is %i', (host, expected) => {
    expect(parseIpv4(host)).toBe(expected);
  });

  notParsed('IPv4', parseIpv4, [
    '',
    '.',
    'example.com',
    '1.2.3.4.5',
    '256.0.0.1',
    '1.2.3.256',
    '1.16777216',
    '4294967296',
    '08',
    '0x1g',
    '1..2',
    '1.2.3.4..',
    '-1',
    '1e3',
    ' 1',
    '[::1]',
  ]);
});

describe('parseIpv6', () => {
  it.each([
    ['::', '00000000000000000000000000000000'],
    ['[::1]', '00000000000000000000000000000001'],
    ['0:0:0:0:0:0:0:1', '00000000000000000000000000000001'],
    ['[2606:4700:4700::1111]', '26064700470000000000000000001111'],
    ['FE80::1', 'fe800000000000000000000000000001'],
    ['::ffff:127.0.0.1', '00000000000000000000ffff7f000001'],
    ['64:ff9b::10.0.0.1', '0064ff9b00000000000000000a000001'],
    ['1:2:3:4:5:6:7::', '00010002000300040005000600070000'],
    ['::2:3:4:5:6:7:8', '00000002000300040005000600070008'],
    ['1:2:3:4:5:6:1.2.3.4', '00010002000300040005000601020304'],
  ])('%s', (host, expected) => {
    expect(hex(parseIpv6(host))).toBe(expected);
  });

  notParsed('IPv6', parseIpv6, [
    '',
    '127.0.0.1',
    'example.com',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4::5:6:7:8',
    '1::2::3',
    ':::',
    ':1::',
    '1::2:',
    '12345::',
    'fe80::1%eth0',
    '[fe80::1%25eth0]',
    '[::1',
    '::1]',
    '::ffff:127.1',
    '::ffff:127.0.0.01',
    '::1.2.3.4:5',
    'g::1',
  ]);
});
