// Sends a console page with the headers every page carries: a strict CSP (scripts and styles only from
// our own files), no framing, no referrer beyond our origin, no powerful browser features, HTTPS only
// (HSTS, over HTTPS), and no caching of personal pages.
import type { Context } from 'hono';
import type { AppEnv } from './context.ts';

export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** No page of the console uses these; a page (or an injected script) cannot ask for them either. */
export const PERMISSIONS_POLICY =
  'accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), hid=(), magnetometer=(), ' +
  'microphone=(), midi=(), payment=(), serial=(), usb=()';

/**
 * A year of HTTPS-only for this host, sent only over HTTPS (browsers ignore it over HTTP, and plain-HTTP
 * localhost must keep working). No includeSubDomains or preload: those bind the operator's whole domain,
 * which is theirs to decide at the zone.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000';

/** The headers every console answer carries, pages and their redirects alike. */
export function pageHeaders(c: Context<AppEnv>): void {
  c.header('Content-Security-Policy', PAGE_CSP);
  c.header('X-Frame-Options', 'DENY');
  c.header('Referrer-Policy', 'same-origin');
  c.header('Permissions-Policy', PERMISSIONS_POLICY);
  if (new URL(c.req.url).protocol === 'https:') c.header('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
}

export function sendPage(
  c: Context<AppEnv>,
  page: string,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 410 | 413 | 429 | 502 = 200,
): Response {
  pageHeaders(c);
  return c.html(page, status);
}

/** A console page's 303 to a path on this site (callers pass only paths they made or checked). */
export function redirectPage(c: Context<AppEnv>, path: string): Response {
  pageHeaders(c);
  return c.redirect(path, 303);
}
