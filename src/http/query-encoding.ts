// Hono decodes query strings leniently: a malformed escape such as `%E0%A4` or an encoded lone surrogate
// stays in the value as literal text. For parameters whose exact text matters (QR data, search terms)
// that would silently change what the caller sent, so such a query string is refused instead.
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.ts';
import { ApiError } from '../errors.ts';

export function malformedQueryPart(url: string): string | undefined {
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const end = url.indexOf('#', start);
  for (const part of url.slice(start + 1, end === -1 ? undefined : end).split('&')) {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    // Everything after the first '=' is the value, further '=' included.
    const value = eq === -1 ? '' : part.slice(eq + 1);
    for (const piece of [name, value]) {
      try {
        decodeURIComponent(piece.replaceAll('+', ' '));
      } catch {
        return decodeURIComponentSafe(name);
      }
    }
  }
  return undefined;
}

function decodeURIComponentSafe(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

export const strictQueryEncoding = createMiddleware<AppEnv>(async (c, next) => {
  const bad = malformedQueryPart(c.req.url);
  if (bad !== undefined) {
    throw new ApiError(
      'bad_request',
      `${bad} is not valid percent-encoded UTF-8 text; encode the value with encodeURIComponent or an equivalent`,
      { param: bad },
    );
  }
  await next();
});
