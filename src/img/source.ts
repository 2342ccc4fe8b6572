// The source image of a signed URL, fetched under the meta-tag fetcher's rules (src/fetch/: http(s) only,
// no private addresses, every redirect re-checked, one deadline) and read up to MAX_SOURCE_BYTES by the
// shared bounded reader.
import { OverLimit, readBounded } from '../fetch/bounded-read.ts';
import { failure, safeFetch } from '../fetch/safe-fetch.ts';
import { checkFetchUrl, parseFetchUrl, type UrlPolicy } from '../fetch/url-policy.ts';
import { ApiError } from '../errors.ts';
import { fromBase64url } from './signature.ts';
import { MAX_SOURCE_BYTES, SOURCE_ACCEPT, SOURCE_FETCH_TIMEOUT_MS } from './limits.ts';

export interface SourcePolicy extends UrlPolicy {
  userAgent: string;
}

const badSource = (message: string): ApiError => new ApiError('bad_request', `source: ${message}`, { param: 'source' });

/** The source segment decoded and checked against the URL rules (400 when refused), before anything is fetched. */
export function sourceUrl(segment: string, policy: UrlPolicy): URL {
  const bytes = fromBase64url(segment);
  if (bytes === null || bytes.length === 0)
    throw badSource('must be the base64url (no padding) of an absolute http(s) URL');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badSource('does not decode to UTF-8 text');
  }
  const url = parseFetchUrl(text);
  url.hash = '';
  checkFetchUrl(url, policy);
  return url;
}

const tooLarge = (): ApiError =>
  new ApiError('image_too_large', `the source is larger than ${MAX_SOURCE_BYTES / (1024 * 1024)} MB, the most read`, {
    param: 'source',
    details: { max_bytes: MAX_SOURCE_BYTES },
  });

/** The source's bytes; 502 fetch_failed when it cannot be had, 422 image_too_large past the cap. */
export async function fetchSource(url: URL, policy: SourcePolicy): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(SOURCE_FETCH_TIMEOUT_MS);
  const { response, finalUrl } = await safeFetch(url, { ...policy, signal, accept: SOURCE_ACCEPT });
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > MAX_SOURCE_BYTES) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  try {
    // The shared bounded reader: a missing or lying Content-Length changes nothing.
    return await readBounded(response, MAX_SOURCE_BYTES, signal);
  } catch (err) {
    // Past the cap is the caller's image being too large (422), not the origin failing (502).
    throw err instanceof OverLimit ? tooLarge() : failure(finalUrl, err, signal);
  }
}
