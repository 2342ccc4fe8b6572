// The issuer's side of single sign-on, spoken through oauth4webapi (an OpenID-certified client): its
// discovery document, the code exchange, userinfo and its keys. Every request it makes goes through
// `issuerFetch`: the URL rules of every outbound fetch (src/fetch/: https on a public host and port; the
// FETCH_TEST_ORIGIN loopback origins in tests), one deadline, and the bounded reader, so no answer of an
// issuer is taken in past SSO_MAX_RESPONSE_BYTES.
import * as oauth from 'oauth4webapi';
import { boundedResponse } from '../fetch/bounded-read.ts';
import { FETCH_TIMEOUT_MS } from '../fetch/limits.ts';
import { failure, fetchOnce } from '../fetch/safe-fetch.ts';
import { checkFetchUrl, isTestOrigin } from '../fetch/url-policy.ts';
import { ApiError } from '../errors.ts';
import { SSO_CLOCK_TOLERANCE_S, SSO_MAX_RESPONSE_BYTES } from './limits.ts';

export type IssuerMetadata = oauth.AuthorizationServer & {
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
};

const USER_AGENT = 'Shrinkray-SSO/1.0';

const ssoError = (message: string, details?: Record<string, unknown>) =>
  new ApiError('bad_request', message, { param: 'issuer', ...(details ? { details } : {}) });

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

/**
 * oauth4webapi's transport: the URL rules before each request, the issuer's answer read under
 * SSO_MAX_RESPONSE_BYTES and handed back as a Response rebuilt from those bytes (the library reads it
 * itself). A 3xx is handed back as it is, so a redirect is never followed.
 */
function issuerFetch(testOrigin: string | undefined) {
  return async (raw: string, init: oauth.CustomFetchOptions<string, unknown>): Promise<Response> => {
    const url = new URL(raw);
    const signal = init.signal ?? AbortSignal.timeout(FETCH_TIMEOUT_MS);
    if (url.protocol !== 'https:' && !isTestOrigin(url, { testOrigin }))
      throw new ApiError('fetch_failed', `${url.host}: the issuer's endpoints must use https`);
    const response = await fetchOnce(url, {
      testOrigin,
      userAgent: USER_AGENT,
      signal,
      method: init.method,
      headers: init.headers,
      body: init.body as BodyInit | null | undefined,
    });
    try {
      return await boundedResponse(response, SSO_MAX_RESPONSE_BYTES, signal);
    } catch (err) {
      throw failure(url, err, signal);
    }
  };
}

/** The options of every oauth4webapi call: our transport and deadline; plain http only for a test origin. */
export function httpOptions(
  testOrigin: string | undefined,
  issuer: URL,
): oauth.HttpRequestOptions<string, unknown> & { [oauth.allowInsecureRequests]?: boolean } {
  return {
    [oauth.customFetch]: issuerFetch(testOrigin),
    [oauth.allowInsecureRequests]: isTestOrigin(issuer, { testOrigin }),
    signal: () => AbortSignal.timeout(FETCH_TIMEOUT_MS),
  };
}

/** Our client as oauth4webapi sees it; `now` sets its clock (the Worker's, which tests may move). */
export function clientOf(clientId: string, now: number): oauth.Client {
  return {
    client_id: clientId,
    [oauth.clockTolerance]: SSO_CLOCK_TOLERANCE_S,
    [oauth.clockSkew]: Math.round((now - Date.now()) / 1000),
  };
}

/** An error of the issuer's answer (not of our transport): a 502 fetch_failed that says what was wrong. */
export function issuerAnswerFailure(what: string, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const reason =
    err instanceof oauth.ResponseBodyError
      ? `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`
      : err instanceof Error
        ? err.message
        : String(err);
  return new ApiError('fetch_failed', `${what}: ${reason}`, { details: { reason: 'issuer_answer' } });
}

/** Fetches and checks the discovery document: its `issuer` must be the configured one, exactly. */
export async function discover(issuer: string, testOrigin: string | undefined): Promise<IssuerMetadata> {
  const base = checkIssuerUrl(issuer, testOrigin);
  const mismatch = (named: unknown) =>
    ssoError(
      `the discovery document names the issuer ${JSON.stringify(named)}, not ${JSON.stringify(issuer)}: they must be identical`,
    );
  let doc: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(base, { ...httpOptions(testOrigin, base), algorithm: 'oidc' });
    doc = await oauth.processDiscoveryResponse(base, response);
  } catch (err) {
    if (err instanceof oauth.OperationProcessingError && err.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      throw mismatch((err.cause as { body?: { issuer?: unknown } } | undefined)?.body?.issuer);
    }
    throw issuerAnswerFailure(`the issuer's discovery document (${base.host}) could not be used`, err);
  }
  // Exactly the configured string: the library lets `https://a/` stand for `https://a`.
  if (doc.issuer !== issuer) throw mismatch(doc.issuer);
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    const value = doc[name];
    if (typeof value !== 'string') throw ssoError(`the discovery document has no ${name}`);
    checkIssuerUrl(value, testOrigin, name);
  }
  if (doc.userinfo_endpoint !== undefined)
    checkIssuerUrl(String(doc.userinfo_endpoint), testOrigin, 'userinfo_endpoint');
  return doc as IssuerMetadata;
}

export async function fetchJwks(
  metadata: IssuerMetadata,
  testOrigin: string | undefined,
): Promise<{ keys: JsonWebKey[] }> {
  const url = new URL(metadata.jwks_uri);
  const response = await issuerFetch(testOrigin)(url.href, {
    method: 'GET',
    headers: { accept: 'application/json' },
    body: undefined,
    redirect: 'manual',
  });
  let doc: unknown;
  try {
    doc = response.ok ? await response.json() : null;
  } catch {
    // Reported below.
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as { keys?: unknown }).keys)) {
    throw new ApiError('fetch_failed', `the issuer's JWKS (${url.host}) has no keys`, {
      details: { status: response.status },
    });
  }
  return doc as { keys: JsonWebKey[] };
}
