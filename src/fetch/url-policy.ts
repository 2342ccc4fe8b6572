// The URL rules of "Fetching external URLs": scheme, port, credentials and host. Applied to the URL as
// given and to every redirect target. A refusal is a 400: the URL (or where it leads) is not allowed.
import { ApiError } from '../errors.ts';
import { forbiddenHost } from './address.ts';
import { ALLOWED_PORTS, MAX_URL_LENGTH } from './limits.ts';

export interface UrlPolicy {
  /**
   * Tests and local runs only (var FETCH_TEST_ORIGIN): exact loopback origins (comma-separated) whose host (and the port
   * that is part of that origin) is fetched despite the address and port rules. Every other rule (scheme,
   * no user name or password, length) still applies to it. Anything that is not a plain http(s) loopback
   * origin is ignored, so a mistaken value cannot open a private network.
   */
  testOrigin: string | undefined;
  /**
   * When set and not empty, the only hosts a URL (and every redirect) may name: exact names, or
   * `*.example.com` for the subdomains of example.com (signed image URLs' per-account list).
   */
  allowedHosts?: readonly string[];
}

const refused = (message: string, details?: Record<string, unknown>): ApiError =>
  new ApiError('bad_request', message, { param: 'url', ...(details ? { details } : {}) });

/** Parses a caller's URL; only absolute http(s) URLs are accepted. */
export function parseFetchUrl(raw: string): URL {
  const text = raw.trim();
  if (text.length === 0) throw refused('url must not be empty');
  if (text.length > MAX_URL_LENGTH) throw refused(`url must be at most ${MAX_URL_LENGTH} characters`);
  const url = URL.parse(text);
  if (url === null) throw refused('url must be an absolute URL such as https://example.com/page');
  return url;
}

/** Throws a 400 when the rules forbid fetching this URL. */
export function checkFetchUrl(url: URL, policy: UrlPolicy, details?: Record<string, unknown>): void {
  const fail = (message: string) => refused(message, details);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fail(`${where(details)}must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.username !== '' || url.password !== '')
    throw fail(`${where(details)}must not contain a user name or password`);
  if (url.href.length > MAX_URL_LENGTH) throw fail(`${where(details)}must be at most ${MAX_URL_LENGTH} characters`);
  if (policy.allowedHosts?.length && !hostAllowed(url.hostname, policy.allowedHosts)) {
    throw fail(
      `${where(details)}must be on one of the allowed source hosts (${policy.allowedHosts.join(', ')}), not ${url.hostname}`,
    );
  }
  // Only now, with every rule about the URL itself applied, may the one test origin skip the rules
  // about where it points: its loopback host and the port that belongs to that origin.
  if (isTestOrigin(url, policy)) return;
  if (!ALLOWED_PORTS.has(url.port)) throw fail(`${where(details)}must use port 80 or 443, not ${url.port}`);
  const reason = forbiddenHost(url.hostname);
  if (reason !== null) throw fail(`${where(details)}must not point at ${url.hostname}: it is ${reason}`);
}

function where(details?: Record<string, unknown>): string {
  return details?.location !== undefined ? `url redirects to ${String(details.location)}, which ` : 'url ';
}

export function isTestOrigin(url: URL, policy: UrlPolicy): boolean {
  // A comma list names several (the tests run a webhook receiver and an OpenID provider); each is judged alone.
  const origins =
    policy.testOrigin
      ?.split(',')
      .map((o) => o.trim())
      .filter(Boolean) ?? [];
  return origins.some((origin) => isOneTestOrigin(url, origin));
}

function isOneTestOrigin(url: URL, origin: string): boolean {
  const allowed = URL.parse(origin);
  if (allowed === null || (allowed.protocol !== 'http:' && allowed.protocol !== 'https:')) return false;
  if (allowed.username !== '' || allowed.password !== '' || url.origin !== allowed.origin) return false;
  const host = allowed.hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether `hostname` is in the list: an exact name, or under a `*.` entry (not the bare domain itself). */
export function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return allowed.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
}
