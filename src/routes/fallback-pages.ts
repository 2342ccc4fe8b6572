// What arrives at an address no route serves. The common guesses at the console's pages redirect to them;
// otherwise a browser gets a 404 page with the console's look and a way on, while API clients, and
// anything under /api/, get the JSON envelope (and a known path asked with the wrong method, a 405).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor } from '../http/csrf.ts';
import { errorResponse } from '../http/errors.ts';
import { fallbackError } from '../http/fallback.ts';
import { pageHeaders, sendPage } from '../http/pages.ts';
import { loadSession } from '../http/session.ts';
import { pageNotFound } from '../web/views/message.ts';

/** Addresses people type for the console's pages, and the page each means. */
export const PAGE_ALIASES: Readonly<Record<string, string>> = {
  '/login': '/signin',
  '/log-in': '/signin',
  '/sign-in': '/signin',
  '/register': '/signup',
  '/sign-up': '/signup',
  '/dashboard': '/',
};

export function registerPageAliases(app: OpenAPIHono<AppEnv>): void {
  for (const [alias, page] of Object.entries(PAGE_ALIASES)) {
    app.get(alias, (c) => {
      pageHeaders(c);
      return c.redirect(`${page}${new URL(c.req.url).search}`, 308);
    });
  }
}

/** A browser navigating (it asks for HTML first-class), somewhere outside the API. */
function browserPage(c: Context<AppEnv>): boolean {
  const api = c.req.path === '/api' || c.req.path.startsWith('/api/');
  return !api && /(?:^|,)\s*text\/html\b/i.test(c.req.header('accept') ?? '');
}

export function notFoundHandler(app: OpenAPIHono<AppEnv>) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const error = fallbackError(c, app.routes);
    if (error.code !== 'not_found' || !browserPage(c)) return errorResponse(error, c.var.requestId);
    // The session only picks the navigation (signed in or not): no page here acts on it.
    await loadSession(c, async () => {});
    const account = c.var.session?.account ?? null;
    return sendPage(c, pageNotFound({ path: c.req.path, csrf: csrfTokenFor(c), account }), 404);
  };
}
