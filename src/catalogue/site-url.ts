import { ApiError } from '../errors.ts';

const cache = new Map<string, string>();

/**
 * TOOLS_SITE_URL without its trailing slash. A missing or malformed value is the operator's mistake,
 * reported as a 500 (and logged once per value) rather than handing out broken tool links.
 */
export function toolsSiteUrl(raw: string | undefined): string {
  const value = raw ?? '';
  const known = cache.get(value);
  if (known !== undefined) return known;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.search || parsed.hash) {
    console.error(
      `TOOLS_SITE_URL must be an absolute http(s) URL without query or fragment; got ${JSON.stringify(value)}`,
    );
    throw new ApiError('internal_error', 'the tool catalogue is misconfigured on this server');
  }
  const normal = value.replace(/\/+$/, '');
  cache.set(value, normal);
  return normal;
}
