// Fetches an external URL under the rules: every hop checked, redirects followed by hand, one deadline
// for the whole exchange. Answers with the final response (status < 400) and its URL; everything else
// becomes a 400 (the rules refuse a hop) or a 502 fetch_failed. `fetchOnce` is the same check and
// deadline for one request of a protocol client (SSO), which reads any status itself and follows nothing.
import { ApiError } from '../errors.ts';
import { OverLimit, tooLargeFailure } from './bounded-read.ts';
import { MAX_REDIRECTS } from './limits.ts';
import { checkFetchUrl, type UrlPolicy } from './url-policy.ts';

export interface FetchOptions extends UrlPolicy {
  userAgent: string;
  /** Aborts the exchange: the caller's deadline (FETCH_TIMEOUT_MS, or what is left of a bulk call's). */
  signal: AbortSignal;
  /** The Accept header sent; default: HTML first (meta tags). */
  accept?: string;
}

export interface OnceOptions extends Omit<FetchOptions, 'accept'> {
  method: string;
  /** Sent as given, with our User-Agent; Accept too when they name none. */
  headers: Record<string, string>;
  body?: BodyInit | null | undefined;
}

export interface Fetched {
  response: Response;
  finalUrl: URL;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const fetchFailed = (message: string, details: Record<string, unknown>): ApiError =>
  new ApiError('fetch_failed', message, { details });

export async function safeFetch(start: URL, options: FetchOptions): Promise<Fetched> {
  let url = start;
  checkFetchUrl(url, options);
  for (let redirects = 0; ; redirects++) {
    const response = await send(url, options);
    const location = response.headers.get('location');
    if (REDIRECT_STATUSES.has(response.status) && location !== null) {
      await discard(response);
      const next = URL.parse(location, url);
      if (next === null) {
        throw fetchFailed(`${url.host} redirected to an invalid URL`, {
          status: response.status,
          reason: 'bad_redirect',
        });
      }
      if (redirects + 1 > MAX_REDIRECTS) {
        throw fetchFailed(`more than ${MAX_REDIRECTS} redirects, the most followed`, {
          reason: 'too_many_redirects',
          redirects: redirects + 1,
        });
      }
      next.hash = '';
      checkFetchUrl(next, options, { redirect: redirects + 1, location: next.href });
      url = next;
      continue;
    }
    if (response.status >= 400) {
      await discard(response);
      throw fetchFailed(`${url.host} answered ${response.status}`, { status: response.status, reason: 'status' });
    }
    return { response, finalUrl: url };
  }
}

/** One request, its URL checked by the rules; the answer whatever its status (a 3xx is not followed). */
export async function fetchOnce(url: URL, options: OnceOptions): Promise<Response> {
  checkFetchUrl(url, options);
  return send(url, options, { method: options.method, headers: options.headers, body: options.body ?? null });
}

async function send(
  url: URL,
  options: FetchOptions,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('User-Agent', options.userAgent);
  if (!headers.has('Accept'))
    headers.set('Accept', options.accept ?? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1');
  try {
    return await fetch(url, { ...init, redirect: 'manual', signal: options.signal, headers });
  } catch (err) {
    throw failure(url, err, options.signal);
  }
}

/** Maps what the runtime threw to a 502; the runtime's own wording goes no further than the logs. */
export function failure(url: URL, err: unknown, signal: AbortSignal): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof OverLimit) return tooLargeFailure(url, err.maxBytes);
  if (signal.aborted) {
    return fetchFailed(`${url.host} did not answer within the time limit`, { reason: 'timeout' });
  }
  return fetchFailed(
    `could not fetch from ${url.host}: the name did not resolve, the connection was refused or lost, or TLS failed`,
    {
      reason: 'network',
    },
  );
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to tell: the body was not wanted.
  }
}
