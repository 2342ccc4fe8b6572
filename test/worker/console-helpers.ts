// A browser in miniature for the console tests: a cookie jar, the CSRF token a page carries, and form
// posts that send both, through the Worker's fetch handler (helpers.ts `call`).
import { call, type TestClock } from './helpers.ts';
import { linkIn, mailsTo } from './mail-helpers.ts';

export const ORIGIN = 'https://api.shrinkray.test';

export class Browser {
  readonly cookies = new Map<string, string>();
  clock: TestClock | undefined;
  /**
   * An address of its own (3fff::/20, for documentation, RFC 9637) in a /48 of its own (28 random bits),
   * never another browser's: the per-IP sign-up, sign-in and mail throttles count by its /64 and its /48,
   * and the Worker tests' files share one D1 and one set of Durable Objects per workerd (vitest.config.ts),
   * so a shared prefix would carry other files' counts.
   */
  ip = (() => {
    const [first, ...rest] = crypto.getRandomValues(new Uint16Array(7));
    return `3fff:${(first! & 0xfff).toString(16)}:${rest.map((n) => n.toString(16)).join(':')}`;
  })();
  /** Vars or bindings replaced for every request of this browser (helpers.ts `call`). */
  env: Record<string, unknown> | undefined;

  constructor(clock?: TestClock) {
    this.clock = clock;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async fetch(path: string, init: RequestInit & { env?: Record<string, unknown> } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has('cookie')) headers.set('cookie', this.cookieHeader);
    if (!headers.has('cf-connecting-ip')) headers.set('cf-connecting-ip', this.ip);
    const env = this.env || init.env ? { ...this.env, ...init.env } : undefined;
    const res = await call(path, {
      ...init,
      headers,
      redirect: 'manual',
      ...(this.clock ? { clock: this.clock } : {}),
      ...(env ? { env } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** GETs a page and returns its HTML and the CSRF token in its <meta>. */
  async page(path: string): Promise<{ res: Response; html: string; csrf: string }> {
    const res = await this.fetch(path);
    const html = await res.text();
    return { res, html, csrf: csrfOf(html) };
  }

  /** Posts a form the way a browser does: same-origin headers, urlencoded body. */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    return this.fetch(path, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: ORIGIN,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
    });
  }

  /** A JSON call of the console API with the session's CSRF token. */
  json(
    path: string,
    init: { method?: string; body?: unknown; csrf?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { origin: ORIGIN, ...init.headers };
    if (init.csrf !== undefined) headers['x-csrf-token'] = init.csrf;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return this.fetch(path, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  }
}

export function csrfOf(html: string): string {
  return /<meta name="csrf-token" content="([^"]*)">/.exec(html)?.[1] ?? '';
}

let seq = 0;
export const uniqueEmail = (): string => `person${++seq}-${crypto.randomUUID().slice(0, 8)}@example.com`;
export const PASSWORD = 'correct horse battery staple';
/** A Browser's env for production's password hashing: without the tests' TEST_PBKDF2_ITERATIONS (vitest.config.ts). */
export const PRODUCTION_HASHING = { TEST_PBKDF2_ITERATIONS: undefined };

/**
 * Follows a mailed confirmation link in `browser`: its page, then its button, with the password chosen at
 * sign-up when the page asks for it. Returns the button's answer, or the page's when it has no button (a
 * dead link).
 */
export async function confirmEmail(browser: Browser, link: string, password = PASSWORD): Promise<Response> {
  const path = new URL(link);
  const page = await browser.page(`${path.pathname}${path.search}`);
  if (page.res.status !== 200) return new Response(page.html, { status: page.res.status });
  const token = path.searchParams.get('token') ?? '';
  const asks = page.html.includes('name="password"');
  return browser.post('/verify-email', { _csrf: page.csrf, token, ...(asks ? { password } : {}) });
}

/**
 * Signs a new person up and confirms their address with the mailed link, as a person does; returns the
 * browser (holding the session cookie) and the session's CSRF token.
 */
export async function signedUp(
  options: { email?: string; password?: string; name?: string; clock?: TestClock; env?: Record<string, unknown> } = {},
) {
  const browser = new Browser(options.clock);
  browser.env = options.env;
  const email = options.email ?? uniqueEmail();
  const form = await browser.page('/signup');
  const res = await browser.post('/signup', {
    _csrf: form.csrf,
    name: options.name ?? 'Ada Lovelace',
    email,
    password: options.password ?? PASSWORD,
  });
  if (res.status !== 200) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const mails = await mailsTo(email);
  const mail = mails[mails.length - 1];
  if (!mail) throw new Error(`no confirmation mail to ${email}`);
  const confirmed = await confirmEmail(browser, linkIn(mail, '/verify-email?token='));
  if (confirmed.status !== 303) throw new Error(`confirmation failed: ${confirmed.status} ${await confirmed.text()}`);
  const home = await browser.page('/');
  return { browser, email, csrf: home.csrf, home };
}

/** The heading of the landing page, which signed-out visitors get at `/`. */
export const LANDING_H1 = '<h1>Smaller images and handy web tools, over one API key</h1>';
