// The SSRF guard of the meta-tag fetcher: decides from a URL's hostname alone whether fetching it could
// reach something that is not the public internet. It re-parses the hostname itself instead of trusting
// that the URL parser normalised it, so a caller that skipped `new URL()` (or a parser that differs from
// the WHATWG one) cannot smuggle `0x7f.1` or `[::ffff:127.0.0.1]` past it. Names are judged on their
// spelling only; what a public name resolves to is left to the runtime's network policy (Cloudflare's
// edge, or workerd's default `allow = ["public"]`), which refuses private addresses at connect time.

const INVALID = 'not a valid address';
const LOCAL_NAME = 'a local name';

interface Range {
  cidr: string;
  bytes: Uint8Array;
  bits: number;
  reason: string;
  /** The low 32 bits carry an IPv4 address worth naming in the message. */
  embedsIpv4: boolean;
}

// First match wins, so narrower ranges come before the wider ones that contain them.
const IPV4_RANGES = table(ipv4Bytes, [
  ['0.0.0.0/8', 'an address on "this network"'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (CGNAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'], // cloud metadata services live here (169.254.169.254)
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol assignment'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a 6to4 relay anycast address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'the broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
]);

// Everything outside 2000::/3 is refused anyway; the entries below it exist to name the range.
// Inside 2000::/3 these are IANA's special-purpose blocks that are not globally reachable (2001::/23
// as a whole: its few reachable anycast exceptions are no place for a web page).
const IPV6_RANGES = table(parseIpv6, [
  ['::/128', 'the unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::ffff:0:0/96', 'an IPv4-mapped IPv6 address', true],
  ['::/96', 'an IPv4-compatible IPv6 address', true],
  ['64:ff9b::/96', 'a NAT64 address', true],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['fc00::/7', 'a unique local address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['ff00::/8', 'a multicast address'],
  ['2001::/32', 'a Teredo address'],
  ['2001:2::/48', 'a benchmarking address'],
  ['2001:10::/28', 'an ORCHID address'],
  ['2001:20::/28', 'an ORCHIDv2 address'],
  ['2001::/23', 'an IETF protocol assignment'],
  ['2001:db8::/32', 'a documentation address'],
  ['2002::/16', 'a 6to4 address'],
  ['3fff::/20', 'a documentation address'],
]);

const GLOBAL_UNICAST = table(parseIpv6, [['2000::/3', 'global unicast']])[0]!;

// Suffixes that only ever resolve inside a network: RFC 6761/6762/8375 names, the ICANN name-collision
// TLDs that will never be delegated, and reverse zones (a PTR name is no web site).
const LOCAL_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'localdomain',
  'home.arpa',
  'arpa',
  'lan',
  'intranet',
  'corp',
  'home',
];

// Public names whose owners point them, and every subdomain, at 127.0.0.1 for local development.
const LOOPBACK_NAMES = ['localtest.me', 'lvh.me', 'vcap.me', 'lacolhost.com'];

/** Why a host must not be fetched, in words fit for an API error message, or null when allowed. */
export function forbiddenHost(hostname: string): string | null {
  const host = hostname.toLowerCase();
  if (host.startsWith('[') || host.includes(':')) {
    const v6 = parseIpv6(host);
    return v6 === null ? INVALID : classifyIpv6(v6);
  }
  // Resolvers treat `a.b.` and `a.b` alike, so trailing dots must not change the verdict.
  const name = host.replace(/\.+$/, '');
  // After IDNA a hostname is ASCII; anything beyond letters, digits, `-`, `_` and dots cannot be a
  // name DNS will serve, and might be read differently by whatever resolves it next.
  if (!/^[a-z0-9_.-]+$/.test(name)) return 'not a valid host name';
  const labels = name.split('.');
  // The WHATWG rule: a host whose last label is a number is an IPv4 address or nothing, never a name.
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels.at(-1)!)) {
    const v4 = parseIpv4(name);
    return v4 === null ? INVALID : classifyIpv4(v4);
  }
  return forbiddenName(name, labels);
}

/** Parses an IPv4 host the way the WHATWG URL standard does; null when it is not an IPv4 notation. */
export function parseIpv4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIpv4Number(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce((sum, n, i) => sum + n * 256 ** (3 - i), last);
}

function parseIpv4Number(part: string): number | null {
  if (part === '') return null;
  const [digits, radix, pattern] = /^0x/i.test(part)
    ? [part.slice(2), 16, /^[0-9a-f]*$/i]
    : part.length > 1 && part.startsWith('0')
      ? [part.slice(1), 8, /^[0-7]+$/]
      : [part, 10, /^[0-9]+$/];
  if (!pattern.test(digits)) return null;
  return digits === '' ? 0 : parseInt(digits, radix);
}

/** Parses an IPv6 literal (brackets optional, zone id refused) into 16 bytes; null when not IPv6. */
export function parseIpv6(host: string): Uint8Array | null {
  const inner = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!/^[0-9a-f:.]+$/i.test(inner)) return null;
  const halves = inner.split('::');
  if (halves.length > 2) return null;
  const head = hexGroups(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? hexGroups(halves[1]!, true) : [];
  if (head === null || tail === null) return null;
  // `::` stands for at least one zero group; without it there must be exactly eight.
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes.set([g >> 8, g & 0xff], i * 2);
  });
  return bytes;
}

function hexGroups(part: string, mayEndInIpv4: boolean): number[] | null {
  if (part === '') return [];
  const pieces = part.split(':');
  const groups: number[] = [];
  for (const [i, piece] of pieces.entries()) {
    if (mayEndInIpv4 && i === pieces.length - 1 && piece.includes('.')) {
      const v4 = dottedQuad(piece.split('.'));
      if (v4 === null) return null;
      groups.push(v4 >>> 16, v4 & 0xffff);
    } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
      groups.push(parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** Strict a.b.c.d in decimal, as wildcard DNS services and IPv6 tails write it; null otherwise. */
function dottedQuad(parts: string[]): number | null {
  if (parts.length !== 4 || !parts.every((p) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(p))) return null;
  return parts.reduce((sum, p) => sum * 256 + Number(p), 0);
}

function forbiddenName(name: string, labels: string[]): string | null {
  if (labels.length === 1) return LOCAL_NAME; // `localhost`, `intranet`, `metadata`: resolved by search domains
  const under = (suffix: string) => name === suffix || name.endsWith('.' + suffix);
  if (LOCAL_SUFFIXES.some(under)) return LOCAL_NAME;
  if (LOOPBACK_NAMES.some(under)) return 'a public name that resolves to loopback';
  return embeddedAddress(name, labels);
}

// nip.io, sslip.io and their clones answer for any name that spells an address, so the name is the
// address. Dotted and dashed quads (`10.0.0.5.sslip.io`, `app-127-0-0-1.nip.io`) are refused under any
// suffix; the terser spellings (`7f000001.nip.io`, `--1.sslip.io` for ::1) only under those services,
// since ordinary names have hex-looking labels (`feedface.com`) and double dashes.
const WILDCARD_DNS = ['nip.io', 'sslip.io', 'xip.io', 'traefik.me'];

function embeddedAddress(name: string, labels: string[]): string | null {
  const wildcard = WILDCARD_DNS.some((suffix) => name === suffix || name.endsWith('.' + suffix));
  const candidates = [...quads(labels)];
  for (const label of labels) {
    const pieces = label.split('-');
    candidates.push(...quads(pieces));
    if (wildcard) candidates.push(...pieces.filter((p) => /^[0-9a-f]{8}$/.test(p)).map((p) => parseInt(p, 16)));
  }
  for (const v4 of candidates) {
    const reason = classifyIpv4(v4);
    if (reason) return `a name that embeds ${formatIpv4(v4)}, ${reason}`;
  }
  for (const label of wildcard ? labels : []) {
    const spelled = label.replaceAll('-', ':');
    const v6 = label.includes('-') ? parseIpv6(spelled) : null;
    const reason = v6 && classifyIpv6(v6);
    if (reason) return `a name that embeds ${spelled}, ${reason}`;
  }
  return null;
}

/** Every run of four consecutive parts that reads as a dotted quad. */
function* quads(parts: string[]): Generator<number> {
  for (let i = 0; i + 4 <= parts.length; i++) {
    const v4 = dottedQuad(parts.slice(i, i + 4));
    if (v4 !== null) yield v4;
  }
}

function classifyIpv4(address: number): string | null {
  const hit = IPV4_RANGES.find((r) => contains(r, octets(address)));
  return hit ? `${hit.reason} (${hit.cidr})` : null;
}

function classifyIpv6(address: Uint8Array): string | null {
  const hit = IPV6_RANGES.find((r) => contains(r, address));
  if (hit) {
    const v4 = hit.embedsIpv4 ? ` pointing at ${[...address.slice(12)].join('.')}` : '';
    return `${hit.reason} (${hit.cidr})${v4}`;
  }
  return contains(GLOBAL_UNICAST, address) ? null : 'a reserved IPv6 address (outside global unicast 2000::/3)';
}

function contains(range: Range, address: Uint8Array): boolean {
  for (let bit = 0; bit < range.bits; bit += 8) {
    const mask = (0xff << (8 - Math.min(8, range.bits - bit))) & 0xff;
    if ((address[bit / 8]! ^ range.bytes[bit / 8]!) & mask) return false;
  }
  return true;
}

function table(parse: (address: string) => Uint8Array | null, rows: [string, string, boolean?][]): Range[] {
  return rows.map(([cidr, reason, embedsIpv4 = false]) => {
    const [address = '', bits = ''] = cidr.split('/');
    const bytes = parse(address);
    if (bytes === null) throw new Error(`bad range ${cidr}`);
    return { cidr, bytes, bits: Number(bits), reason, embedsIpv4 };
  });
}

function ipv4Bytes(address: string): Uint8Array | null {
  const n = dottedQuad(address.split('.'));
  return n === null ? null : octets(n);
}

function octets(address: number): Uint8Array {
  return new Uint8Array([address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff]);
}

function formatIpv4(address: number): string {
  return octets(address).join('.');
}
