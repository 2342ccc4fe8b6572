// Endpoint URLs pass the rules of fetching external URLs (src/fetch/url-policy.ts: scheme, credentials,
// length, port, no private or local hosts) and, stricter, must be https: a signed event still tells a
// network observer what happened. The one FETCH_TEST_ORIGIN (tests, local runs) may be plain http.
import { checkFetchUrl, isTestOrigin, parseFetchUrl } from '../fetch/url-policy.ts';
import { ApiError } from '../errors.ts';

export function checkEndpointUrl(raw: string, testOrigin: string | undefined): URL {
  const url = parseFetchUrl(raw);
  checkFetchUrl(url, { testOrigin });
  if (url.protocol !== 'https:' && !isTestOrigin(url, { testOrigin })) {
    throw new ApiError('bad_request', `url must use https, not ${url.protocol.slice(0, -1)}`, { param: 'url' });
  }
  if (url.hash !== '')
    throw new ApiError('bad_request', 'url must not have a #fragment: it is never sent', { param: 'url' });
  return url;
}
