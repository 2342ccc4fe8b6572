// TXT records over DNS-over-HTTPS, the JSON API that Cloudflare's and Google's resolvers speak
// (`GET <resolver>?name=…&type=TXT`, `accept: application/dns-json`): how an SSO domain is proved. The
// resolver is DNS_RESOLVER_URL (https on a public host, under the rules of every outbound fetch; a
// FETCH_TEST_ORIGIN loopback origin in tests); one request, no redirect followed, one deadline, and the
// answer read under DNS_MAX_RESPONSE_BYTES.
import { ApiError } from '../errors.ts';
import { readBounded } from '../fetch/bounded-read.ts';
import { failure, fetchOnce } from '../fetch/safe-fetch.ts';
import { checkFetchUrl, isTestOrigin } from '../fetch/url-policy.ts';
import { DEFAULT_DNS_RESOLVER_URL, DNS_MAX_RESPONSE_BYTES, DNS_MAX_TXT_RECORDS, DNS_TIMEOUT_MS } from './limits.ts';

export interface ResolverEnv {
  DNS_RESOLVER_URL?: string | null;
  FETCH_TEST_ORIGIN?: string;
}

const USER_AGENT = 'Shrinkray-DNS/1.0';
/** DNS RCODEs of the JSON API's `Status`: the name exists (0), or does not (3); anything else is a failure. */
const NOERROR = 0;
const NXDOMAIN = 3;
const TXT = 16;

/** The resolver to ask; a DNS_RESOLVER_URL the fetch rules refuse is a configuration mistake (500, logged). */
export function resolverUrl(env: ResolverEnv): URL {
  const raw = env.DNS_RESOLVER_URL?.trim() || DEFAULT_DNS_RESOLVER_URL;
  const url = URL.parse(raw);
  const policy = { testOrigin: env.FETCH_TEST_ORIGIN };
  const problem =
    url === null
      ? 'is not an absolute URL'
      : url.protocol !== 'https:' && !isTestOrigin(url, policy)
        ? 'must use https'
        : url.search !== '' || url.hash !== ''
          ? 'must not carry a query or fragment'
          : null;
  if (url === null || problem !== null)
    throw new Error(`the var DNS_RESOLVER_URL ${problem}: "${raw}" (docs/operations.md, "SSO domain proof")`);
  try {
    checkFetchUrl(url, policy);
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`the var DNS_RESOLVER_URL is refused: ${err.message}`);
    throw err;
  }
  return url;
}

/** The text of a TXT record as the JSON API writes it: quoted character-strings, joined (RFC 7208 3.3). */
export function txtText(data: string): string {
  const parts = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)];
  if (parts.length === 0) return data;
  return parts
    .map((m) =>
      m[1]!.replace(/\\(\d{3}|.)/g, (_, esc: string) => (esc.length === 3 ? String.fromCharCode(Number(esc)) : esc)),
    )
    .join('');
}

const resolverFailure = (message: string, details: Record<string, unknown>): ApiError =>
  new ApiError('fetch_failed', `the DNS resolver ${message}`, { details: { reason: 'resolver', ...details } });

/**
 * The TXT records of `name` (empty when it has none or does not exist). A resolver that cannot be reached,
 * answers past the limits, fails the lookup (SERVFAIL and the like) or answers nonsense is a 502 fetch_failed.
 */
export async function lookupTxt(env: ResolverEnv, name: string): Promise<string[]> {
  const url = resolverUrl(env);
  url.searchParams.set('name', name);
  url.searchParams.set('type', 'TXT');
  const signal = AbortSignal.timeout(DNS_TIMEOUT_MS);
  const response = await fetchOnce(url, {
    testOrigin: env.FETCH_TEST_ORIGIN,
    userAgent: USER_AGENT,
    signal,
    method: 'GET',
    headers: { accept: 'application/dns-json' },
  });
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(response, DNS_MAX_RESPONSE_BYTES, signal);
  } catch (err) {
    throw failure(url, err, signal);
  }
  if (response.status !== 200) throw resolverFailure(`answered ${response.status}`, { status: response.status });
  let doc: { Status?: unknown; Answer?: unknown };
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes)) as typeof doc;
  } catch {
    throw resolverFailure('answered something that is not JSON', {});
  }
  if (doc.Status === NXDOMAIN) return [];
  if (doc.Status !== NOERROR)
    throw resolverFailure(`could not look the name up (status ${String(doc.Status)})`, { dns_status: doc.Status });
  const answers = Array.isArray(doc.Answer) ? (doc.Answer as { type?: unknown; data?: unknown }[]) : [];
  return answers
    .filter((a) => a !== null && typeof a === 'object' && a.type === TXT && typeof a.data === 'string')
    .slice(0, DNS_MAX_TXT_RECORDS)
    .map((a) => txtText(a.data as string));
}
