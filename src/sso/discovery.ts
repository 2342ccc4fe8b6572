// The issuer's discovery document and keys, fetched under the URL rules of every outbound fetch
// (src/fetch/: https on a public host and port; the FETCH_TEST_ORIGIN loopback origins in tests).
import { FETCH_TIMEOUT_MS, MAX_BODY_BYTES } from '../fetch/limits.ts';
import { safeFetch } from '../fetch/safe-fetch.ts';
import { checkFetchUrl, isTestOrigin } from '../fetch/url-policy.ts';
import { ApiError } from '../http/errors.ts';

export interface IssuerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

const USER_AGENT = 'Shrinkray-SSO/1.0';

const ssoError = (message: string, details?: Record<string, unknown>) => new ApiError('bad_request', message, { param: 'issuer', ...(details ? { details } : {}) });

/** https, or the test origin: the issuer and every endpoint it names. */
export function checkIssuerUrl(raw: string, testOrigin: string | undefined, what = 'issuer'): URL {
  const url = URL.parse(raw);
  if (url === null) throw ssoError(`${what} must be an absolute URL such as https://login.example.com`);
  if (url.protocol !== 'https:' && !isTestOrigin(url, { testOrigin })) throw ssoError(`${what} must use https`);
  if (url.search !== '' || url.hash !== '') throw ssoError(`${what} must not carry a query or fragment`);
  // The address and port rules of every outbound fetch (private networks, metadata addresses, odd ports).
  try {
    checkFetchUrl(url, { testOrigin });
  } catch (err) {
    if (err instanceof ApiError) throw ssoError(err.message.replace(/^url /, `${what} `));
    throw err;
  }
  return url;
}

async function getJson(url: URL, testOrigin: string | undefined): Promise<Record<string, unknown>> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const { response } = await safeFetch(url, { testOrigin, userAgent: USER_AGENT, signal });
  const text = await response.text();
  if (text.length > MAX_BODY_BYTES) throw new ApiError('fetch_failed', `${url.host} answered with more than ${MAX_BODY_BYTES} bytes`);
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through to the error below.
  }
  throw new ApiError('fetch_failed', `${url.href} did not answer with a JSON object`, { details: { status: response.status } });
}

/** Fetches and checks the discovery document: its `issuer` must be the configured one, exactly. */
export async function discover(issuer: string, testOrigin: string | undefined): Promise<IssuerMetadata> {
  const base = checkIssuerUrl(issuer, testOrigin);
  const url = new URL(`${base.href.replace(/\/$/, '')}/.well-known/openid-configuration`);
  const doc = await getJson(url, testOrigin);
  if (doc.issuer !== issuer) {
    throw ssoError(`the discovery document names the issuer ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(issuer)}: they must be identical`);
  }
  const out: Record<string, string> = { issuer };
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    const value = doc[name];
    if (typeof value !== 'string') throw ssoError(`the discovery document has no ${name}`);
    checkIssuerUrl(value, testOrigin, name);
    out[name] = value;
  }
  return out as unknown as IssuerMetadata;
}

export async function fetchJwks(metadata: IssuerMetadata, testOrigin: string | undefined): Promise<{ keys: JsonWebKey[] }> {
  const doc = await getJson(new URL(metadata.jwks_uri), testOrigin);
  if (!Array.isArray(doc.keys)) throw new ApiError('fetch_failed', 'the issuer\'s JWKS has no keys');
  return doc as unknown as { keys: JsonWebKey[] };
}

/** The token endpoint's answer to the authorization code, under the same rules. */
export async function exchangeCode(
  metadata: IssuerMetadata, testOrigin: string | undefined, client: { id: string; secret: string }, form: Record<string, string>,
): Promise<Record<string, unknown>> {
  const url = new URL(metadata.token_endpoint);
  checkIssuerUrl(url.href, testOrigin, 'token_endpoint');
  // client_secret_basic: id and secret form-urlencoded, then base64 (RFC 6749 2.3.1).
  const basic = btoa(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`);
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json', 'User-Agent': USER_AGENT },
    body: new URLSearchParams(form),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Reported below with the status.
  }
  if (!response.ok) throw new ApiError('fetch_failed', `the token endpoint refused the code: ${String(body.error ?? response.status)}`, { details: { status: response.status } });
  return body;
}
