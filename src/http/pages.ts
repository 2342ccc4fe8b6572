// Sends a console page with the headers every page carries: a strict CSP (scripts and styles only from
// our own files), no framing, no referrer beyond our origin, and no caching of personal pages.
import type { Context } from 'hono';
import type { AppEnv } from './context.ts';

export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

export function sendPage(c: Context<AppEnv>, page: string, status: 200 | 400 | 401 | 403 | 404 | 409 | 413 | 429 = 200): Response {
  c.header('Content-Security-Policy', PAGE_CSP);
  c.header('X-Frame-Options', 'DENY');
  c.header('Referrer-Policy', 'same-origin');
  return c.html(page, status);
}
