// Accounts for people: sign-up, sign-in, sessions and their cookie, CSRF, sign-out, and the throttles.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/accounts/keys.ts';
import {
  MAIL_REQUESTS_PER_EMAIL,
  MAIL_REQUESTS_PER_IP,
  MAIL_REQUESTS_PER_IP6_48,
  MAIL_REQUESTS_UNTRUSTED_TOTAL,
  SESSION_IDLE_MS,
  SIGNIN_EMAIL_DELAY_BASE_S,
  SIGNIN_EMAIL_DELAY_MAX_S,
  SIGNIN_EMAIL_FREE_FAILURES,
  SIGNIN_PER_IP,
  SIGNIN_PER_IP6_48,
  SIGNIN_UNTRUSTED_TOTAL,
  SIGNUP_PER_EMAIL,
  SIGNUP_PER_IP,
  SIGNUP_PER_IP6_48,
  SIGNUP_UNTRUSTED_TOTAL,
} from '../../src/auth/limits.ts';
import {
  mailRequestRules,
  signInRules,
  signUpRules,
  type ThrottleRule,
  UNKNOWN_CLIENT,
} from '../../src/auth/throttle.ts';
import { hashPassword } from '../../src/auth/password.ts';
import { TestClock, captureConsole } from './helpers.ts';
import { safeNext } from '../../src/routes/auth-forms.ts';
import { selfhostEnv, type SelfhostEnv } from '../../src/selfhost/env.ts';
import worker from '../../src/index.ts';
import {
  Browser,
  confirmEmail,
  LANDING_H1,
  ORIGIN,
  PASSWORD,
  PRODUCTION_HASHING,
  signedUp,
  uniqueEmail,
} from './console-helpers.ts';
import { linkIn, mailsTo } from './mail-helpers.ts';

const alertOf = (html: string): string => (/role="alert">([^<]*)</.exec(html)?.[1] ?? '').replaceAll('&#39;', "'");

async function signIn(
  browser: Browser,
  email: string,
  password: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  const form = await browser.page('/signin');
  return browser.post('/signin', { _csrf: form.csrf, email, password, ...extra });
}

describe('sign-up', () => {
  it('creates the account, which the mailed link confirms and signs in, landing on the usage page', async () => {
    const { browser, email, home } = await signedUp({ name: 'Grace Hopper', env: PRODUCTION_HASHING });
    expect(home.res.status).toBe(200);
    expect(home.html).toContain('<h1>Usage</h1>');
    expect(home.html).toContain('Grace Hopper');
    const row = await env.DB.prepare('SELECT name, image_tier, tools_tier, password_hash FROM accounts WHERE email = ?')
      .bind(email)
      .first<Record<string, string>>();
    expect(row).toMatchObject({ name: 'Grace Hopper', image_tier: 'free', tools_tier: 'free' });
    expect(row!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(row!.password_hash).not.toContain(PASSWORD);
    expect(browser.cookies.has('__Host-sr_session')).toBe(true);
  });

  it('answers a registered email, in any letter case, exactly like a new one, and mails its owner instead', async () => {
    const { email } = await signedUp();
    const before = (await mailsTo(email)).length;
    const attempt = async (address: string) => {
      const browser = new Browser();
      const form = await browser.page('/signup');
      const res = await browser.post('/signup', {
        _csrf: form.csrf,
        name: 'Other',
        email: address,
        password: PASSWORD,
      });
      return {
        res,
        browser,
        html: (await res.text())
          .replaceAll(address, 'ADDRESS')
          .replace(/content="[^"]*"|value="[A-Za-z0-9_-]{43}"/g, ''),
      };
    };
    const taken = await attempt(email.toUpperCase());
    const fresh = await attempt(uniqueEmail());
    expect(taken.res.status).toBe(200);
    expect(fresh.res.status).toBe(200);
    expect(taken.html).toBe(fresh.html);
    expect(taken.html).toContain('<h1>Check your email</h1>');
    expect(taken.browser.cookies.has('__Host-sr_session')).toBe(false);
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM members WHERE email = ? COLLATE NOCASE')
      .bind(email)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
    const mails = await mailsTo(email, before + 1);
    const notice = mails[before]!;
    expect(notice.subject).toBe('Someone tried to sign up for Shrinkray with your address');
    expect(notice.text).toContain('https://api.shrinkray.test/forgot-password');
    expect(notice.text).not.toMatch(/token=/);
  });

  it('explains each invalid field and keeps what was typed, except the password', async () => {
    const browser = new Browser();
    const form = await browser.page('/signup');
    const res = await browser.post('/signup', {
      _csrf: form.csrf,
      name: '  ',
      email: 'not-an-email',
      password: 'short',
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('Enter your name.');
    expect(html).toContain('Enter an email address like name@example.com.');
    expect(html).toContain('Use at least 10 characters.');
    expect(html).toContain('value="not-an-email"');
    expect(html).not.toContain('value="short"');
    expect(html).toMatch(/id="email"[^>]*aria-invalid="true"/);
    expect(html).toMatch(/id="email"[^>]*aria-describedby="email-error"/);
  });
});

describe('sign-in', () => {
  it('signs in with the right password and goes where it was sent (on this site only)', async () => {
    const { email } = await signedUp();
    const browser = new Browser();
    const res = await signIn(browser, email.toUpperCase(), PASSWORD, { next: '/keys' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/keys');
    expect((await browser.page('/keys')).html).toContain('<h1>API keys</h1>');

    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example']) {
      const other = new Browser();
      const r = await signIn(other, email, PASSWORD, { next });
      expect(r.headers.get('location'), next).toBe('/');
    }
  });

  it('gives one message for a wrong password and an unknown email, and no session', async () => {
    const { email } = await signedUp();
    const browser = new Browser();
    const wrong = await signIn(browser, email, 'not the password at all');
    const unknown = await signIn(browser, uniqueEmail(), PASSWORD);
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const [a, b] = [alertOf(await wrong.text()), alertOf(await unknown.text())];
    expect(a).toBe(
      'That email and password do not match an account. If you signed up, confirm your email first: open the link we mailed you, or have it sent again.',
    );
    expect(b).toBe(a);
    expect(browser.cookies.has('__Host-sr_session')).toBe(false);
  });

  it('refuses accounts made by the operator, which have no password', async () => {
    const email = uniqueEmail();
    await env.DB.prepare("INSERT INTO accounts (id, email, name, created_at) VALUES (?, ?, 'CLI', 0)")
      .bind(`acc_${crypto.randomUUID()}`, email)
      .run();
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(401);
  });

  it('re-hashes a password stored with fewer iterations at the next sign-in', async () => {
    const { email } = await signedUp();
    await env.DB.prepare('UPDATE members SET password_hash = ? WHERE email = ?')
      .bind(await hashPassword(PASSWORD, 1000), email)
      .run();
    const browser = new Browser();
    browser.env = PRODUCTION_HASHING;
    expect((await signIn(browser, email, PASSWORD)).status).toBe(303);
    const row = await env.DB.prepare('SELECT password_hash FROM members WHERE email = ?')
      .bind(email)
      .first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/);
  });

  it("hashes with this suite's lower TEST_PBKDF2_ITERATIONS; a 100,000-round hash still signs in, unchanged", async () => {
    const storedHash = async (email: string) =>
      (await env.DB.prepare('SELECT password_hash FROM members WHERE email = ?')
        .bind(email)
        .first<{ password_hash: string }>())!.password_hash;
    const cheap = await signedUp();
    expect(await storedHash(cheap.email)).toMatch(/^pbkdf2-sha256\$1000\$/);
    const strong = await signedUp({ env: PRODUCTION_HASHING });
    const before = await storedHash(strong.email);
    expect(before).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect((await signIn(new Browser(), strong.email, PASSWORD)).status).toBe(303);
    expect(await storedHash(strong.email)).toBe(before);
  });

  it('redirects signed-out visitors of console pages to sign-in, and back afterwards', async () => {
    for (const path of ['/keys', '/try']) {
      const res = await new Browser().fetch(path);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`/signin?next=${encodeURIComponent(path)}`);
    }
    // `/` itself is the landing page for visitors, linking to sign-in (console-onboarding.test.ts).
    const root = await new Browser().page('/');
    expect(root.res.status).toBe(200);
    expect(root.html).toContain(LANDING_H1);
  });
});

/**
 * env.DB as the Worker sees it, except that every statement touching the audit log waits for `hold`, and
 * the SQL of each statement that finishes is pushed to `done` as it finishes: what a request waited for.
 */
function auditHeldBack(db: D1Database, hold: Promise<void>, done: string[]): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const sqlOf = new WeakMap<object, string>();
  const settle = async <T>(sql: string, work: () => Promise<T>): Promise<T> => {
    if (sql.includes('audit_logs')) await hold;
    const result = await work();
    done.push(sql);
    return result;
  };
  const wrap = (sql: string, statement: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = {
      bind: (...values: unknown[]) => wrap(sql, statement.bind(...values)),
      first: (column?: string) =>
        settle(sql, () => (column === undefined ? statement.first() : statement.first(column))),
      run: () => settle(sql, () => statement.run()),
      all: () => settle(sql, () => statement.all()),
      raw: () => settle(sql, () => statement.raw()),
    };
    real.set(wrapped, statement);
    sqlOf.set(wrapped, sql);
    return wrapped as unknown as D1PreparedStatement;
  };
  return {
    prepare: (sql: string) => wrap(sql, db.prepare(sql)),
    batch: (statements: D1PreparedStatement[]) =>
      settle(statements.map((st) => sqlOf.get(st)!).join('; '), () => db.batch(statements.map((st) => real.get(st)!))),
    exec: (sql: string) => db.exec(sql),
  } as unknown as D1Database;
}

/**
 * How long a sign-in whose audit record is held back may take to answer before it counts as waiting for the
 * record: long, so a loaded machine does not fail it; only a sign-in that waits (the defect) takes it.
 */
const NO_ANSWER_MS = 10_000;

describe('a failed sign-in of a registered address and of an unknown one', () => {
  it("waits for the same D1 work before its answer: the registered one's audit record is written after it", async () => {
    const { email } = await signedUp();
    const { account_id } = (await env.DB.prepare('SELECT account_id FROM members WHERE email = ?')
      .bind(email)
      .first<{ account_id: string }>())!;
    /** A wrong password for `address`, its audit records held back: the answer, or none, and what it waited for. */
    const attempt = async (address: string) => {
      const browser = new Browser();
      const form = await browser.page('/signin');
      let release = () => {};
      const hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const done: string[] = [];
      const ctx = createExecutionContext();
      const request = new Request(`${ORIGIN}/signin`, {
        method: 'POST',
        body: new URLSearchParams({ _csrf: form.csrf, email: address, password: 'not the password at all' }),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: ORIGIN,
          'sec-fetch-site': 'same-origin',
          cookie: browser.cookieHeader,
          'cf-connecting-ip': browser.ip,
        },
      });
      const answer = worker.fetch(request, { ...env, DB: auditHeldBack(env.DB, hold, done) }, ctx);
      const first = await Promise.race([
        answer,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), NO_ANSWER_MS)),
      ]);
      const waitedFor = [...done];
      release();
      await answer;
      await waitOnExecutionContext(ctx);
      return { status: first?.status ?? 'no answer until the audit record was written', waitedFor };
    };
    const registered = await attempt(email);
    const unknown = await attempt(uniqueEmail());
    expect(registered.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(registered.waitedFor).toEqual(unknown.waitedFor);
    expect(unknown.waitedFor).toContainEqual(expect.stringContaining('FROM members'));
    // The record is still written, after the answer.
    const records = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'session.sign_in_failed'",
    )
      .bind(account_id)
      .all<{ details: string }>();
    expect(records.results.map((r) => JSON.parse(r.details))).toEqual([
      { method: 'password', reason: 'invalid_credentials' },
    ]);
  }, 30_000);
});

describe('the way back after sign-in (next)', () => {
  // Browsers drop tabs and newlines from URLs, so `/\t/evil.example` would be `//evil.example` to them;
  // CR or LF in a Location header used to be a 500 (after the session row was written).
  const HOSTILE = [
    '/\t/evil.example',
    '/\r/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    '/\0/evil.example',
    '/ /evil.example',
    '/\x7f/evil.example',
    '/\x1f/evil.example',
    '/\\evil.example',
    '//evil.example',
    'https://evil.example/',
    '/keys\t',
  ];

  it('GET /signin: a next with any byte up to 0x20, DEL or a backslash is refused (303 to /, never 500)', async () => {
    const { browser } = await signedUp();
    for (const next of HOSTILE) {
      const res = await browser.fetch(`/signin?next=${encodeURIComponent(next)}`);
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.headers.get('location'), JSON.stringify(next)).toBe('/');
    }
    // The spelling of the report, as a browser would send it.
    const raw = await browser.fetch('/signin?next=/%09/evil.example');
    expect([raw.status, raw.headers.get('location')]).toEqual([303, '/']);
    // Signed out, the form does not carry it on either.
    const form = await new Browser().page('/signin?next=/%09/evil.example');
    expect(form.res.status).toBe(200);
    expect(form.html).not.toContain('name="next"');
    // A path of our own still works, resolved and percent-encoded.
    const keys = await browser.fetch(`/signin?next=${encodeURIComponent('/keys?x=1#top')}`);
    expect(keys.headers.get('location')).toBe('/keys?x=1#top');
    const accents = await browser.fetch(`/signin?next=${encodeURIComponent('/keys/é')}`);
    expect(accents.headers.get('location')).toBe('/keys/%C3%A9');
  });

  it('POST /signin: the same values sign in to / with a cookie, and no session row is left without one', async () => {
    const { email } = await signedUp();
    const sessions = async (): Promise<number> =>
      (await env.DB.prepare(
        'SELECT COUNT(*) AS n FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE a.email = ?',
      )
        .bind(email)
        .first<{ n: number }>())!.n;
    const before = await sessions();
    for (const [i, next] of HOSTILE.entries()) {
      const browser = new Browser();
      const res = await signIn(browser, email, PASSWORD, { next });
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.headers.get('location'), JSON.stringify(next)).toBe('/');
      expect(browser.cookies.has('__Host-sr_session'), JSON.stringify(next)).toBe(true);
      expect(await sessions(), JSON.stringify(next)).toBe(before + i + 1);
    }
  });
});

describe('the way back after sign-in: dot segments and backslashes (next)', () => {
  // Each resolves to `//evil.test` (a browser reads a leading `/\\` the same way) unless refused.
  const DOTTED = [
    '/.//evil.test',
    '/..//evil.test',
    '/%2e%2e//evil.test',
    '/%2E%2E//evil.test',
    '/%2e//evil.test',
    '/a/../..//evil.test',
    '/a/%2e%2e/..//evil.test',
    '/././/evil.test?x=1#y',
  ];
  const BACKSLASHED = [
    '/\\evil.test',
    '/\\\\evil.test',
    '/%5cevil.test',
    '/%5Cevil.test',
    '/.\\/evil.test',
    '/.\\\\/evil.test',
    '/..\\evil.test',
    '/a/..\\..\\/evil.test',
  ];
  const CONTROLS = [
    '/.\t//evil.test',
    '/\t/.//evil.test',
    '/.\n//evil.test',
    '/\r\n..//evil.test',
    '/%09/.//evil.test',
    '/.%0a//evil.test',
  ];
  const ALL = [...DOTTED, ...BACKSLASHED, ...CONTROLS];
  /** Where a browser goes when it follows `location` from a page of ours. */
  const lands = (location: string): string => new URL(location, ORIGIN).origin;

  it('safeNext: never a path a browser reads as another host', () => {
    for (const next of DOTTED) expect(safeNext(next, ORIGIN), JSON.stringify(next)).toBeUndefined();
    for (const next of ALL) {
      const path = safeNext(next, ORIGIN);
      if (path === undefined) continue;
      expect(path, JSON.stringify(next)).toMatch(/^\/(?![/\\])/);
      expect(lands(path), JSON.stringify(next)).toBe(ORIGIN);
    }
    // A percent-encoded backslash stays a byte of one path segment of ours.
    expect(safeNext('/%5cevil.test', ORIGIN)).toBe('/%5cevil.test');
    expect(safeNext('/keys/./../keys', ORIGIN)).toBe('/keys');
  });

  it('GET and POST /signin: each spelling ends on this origin, signed in', async () => {
    const { browser, email } = await signedUp();
    for (const next of ALL) {
      const res = await browser.fetch(`/signin?next=${encodeURIComponent(next)}`);
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(lands(res.headers.get('location')!), JSON.stringify(next)).toBe(ORIGIN);
      expect(res.headers.get('location'), JSON.stringify(next)).not.toMatch(/^\/[/\\]/);
    }
    for (const next of ALL) {
      const res = await signIn(new Browser(), email, PASSWORD, { next });
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(lands(res.headers.get('location')!), JSON.stringify(next)).toBe(ORIGIN);
      expect(res.headers.get('location'), JSON.stringify(next)).not.toMatch(/^\/[/\\]/);
    }
    for (const next of DOTTED)
      expect((await browser.fetch(`/signin?next=${encodeURIComponent(next)}`)).headers.get('location'), next).toBe('/');
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Secure and __Host- prefixed over HTTPS, and only a hash of it is stored', async () => {
    const browser = new Browser();
    const email = uniqueEmail();
    const form = await browser.page('/signup');
    await browser.post('/signup', { _csrf: form.csrf, name: 'Cookie', email, password: PASSWORD });
    expect(browser.cookies.has('__Host-sr_session')).toBe(false);
    const res = await confirmEmail(browser, linkIn((await mailsTo(email))[0]!, '/verify-email?token='));
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-sr_session='))!;
    expect(cookie).toMatch(/; Max-Age=604800/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).not.toMatch(/Domain=/i);
    const token = browser.cookies.get('__Host-sr_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(
      await env.DB.prepare('SELECT 1 FROM sessions WHERE token_hash = ?')
        .bind(await sha256Hex(token))
        .first(),
    ).not.toBeNull();
    expect(await env.DB.prepare('SELECT 1 FROM sessions WHERE token_hash = ?').bind(token).first()).toBeNull();
  });

  it('is not Secure (and has no __Host- prefix) on plain-HTTP localhost, so local development works', async () => {
    const browser = new Browser();
    const local = 'http://127.0.0.1:8787';
    const page = await browser.fetch(`${local}/signup`);
    const csrf = /<meta name="csrf-token" content="([^"]*)">/.exec(await page.text())![1]!;
    const email = uniqueEmail();
    const signUp = await browser.fetch(`${local}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: local },
      body: new URLSearchParams({ _csrf: csrf, name: 'Local', email, password: PASSWORD }),
    });
    expect(signUp.status).toBe(200);
    const token = new URL(linkIn((await mailsTo(email))[0]!, '/verify-email?token=')).searchParams.get('token')!;
    const res = await browser.fetch(`${local}/verify-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: local },
      body: new URLSearchParams({ _csrf: csrf, token, password: PASSWORD }),
    });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sr_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
  });

  it('ends after 7 idle days, slides while in use, and ends 30 days after sign-in whatever the use', async () => {
    const clock = new TestClock();
    const { browser } = await signedUp({ clock });
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await browser.page('/')).html).toContain('<h1>Usage</h1>');
    // That use pushed the expiry forward by almost a week.
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await browser.page('/')).html).toContain('<h1>Usage</h1>');
    clock.advance(SESSION_IDLE_MS + 1);
    expect((await browser.page('/')).html).toContain(LANDING_H1);

    const fresh = await signedUp({ clock });
    for (let day = 5; day <= 25; day += 5) {
      clock.advance(5 * 86_400_000);
      expect((await fresh.browser.page('/')).html, `day ${day}`).toContain('<h1>Usage</h1>');
    }
    clock.advance(5 * 86_400_000 + 1);
    expect((await fresh.browser.page('/')).html).toContain(LANDING_H1);
  });
});

describe('CSRF', () => {
  it('refuses sign-in, sign-up, sign-out and key forms without the right token or from another origin', async () => {
    const { browser, csrf, email } = await signedUp();
    const cases: [string, Record<string, string>][] = [
      ['/keys', { name: 'forged', scopes: 'tools' }],
      ['/signout', {}],
    ];
    for (const [path, fields] of cases) {
      expect((await browser.post(path, fields)).status, `${path} without token`).toBe(403);
      expect((await browser.post(path, { ...fields, _csrf: 'x'.repeat(43) })).status, `${path} wrong token`).toBe(403);
      expect(
        (await browser.post(path, { ...fields, _csrf: csrf }, { origin: 'https://evil.example' })).status,
        `${path} other origin`,
      ).toBe(403);
      expect(
        (await browser.post(path, { ...fields, _csrf: csrf }, { 'sec-fetch-site': 'cross-site' })).status,
        `${path} cross-site`,
      ).toBe(403);
    }
    expect((await browser.json('/api/v1/keys')).status).toBe(200);
    const keys = (await (await browser.json('/api/v1/keys')).json()) as { data: unknown[] };
    expect(keys.data).toEqual([]);

    const anonymous = new Browser();
    await anonymous.page('/signin');
    const forged = await anonymous.post('/signin', { email, password: PASSWORD, _csrf: 'y'.repeat(43) });
    expect(forged.status).toBe(403);
    expect(alertOf(await forged.text())).toContain('This form had expired');
    // A token from another visitor's cookie does not work either: it must match this browser's.
    const other = await new Browser().page('/signin');
    expect((await anonymous.post('/signin', { email, password: PASSWORD, _csrf: other.csrf })).status).toBe(403);
    expect(anonymous.cookies.has('__Host-sr_session')).toBe(false);
  });
});

describe('sign-out', () => {
  it('ends the session in D1 and clears the cookie; the old cookie no longer works', async () => {
    const { browser, csrf } = await signedUp();
    const token = browser.cookies.get('__Host-sr_session')!;
    const res = await browser.post('/signout', { _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    expect(res.headers.getSetCookie().some((c) => /^__Host-sr_session=;.*Max-Age=0/.test(c))).toBe(true);
    expect(
      await env.DB.prepare('SELECT 1 FROM sessions WHERE token_hash = ?')
        .bind(await sha256Hex(token))
        .first(),
    ).toBeNull();
    const replay = new Browser();
    replay.cookies.set('__Host-sr_session', token);
    expect((await replay.fetch('/keys')).status).toBe(303);
    expect((await replay.json('/api/v1/keys')).status).toBe(401);
  });
});

// Several tests sign up 11 to 23 times (a hash and a mail each): more than the default 5 s on a loaded machine.
describe('throttling', { timeout: 20_000 }, () => {
  it('locks the (account, IP) pair after 5 attempts, even for the right password, until its window ends', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 5));
    const { email } = await signedUp({ clock });
    const attacker = new Browser(clock);
    attacker.ip = '198.51.100.66';
    for (let i = 0; i < 5; i++) expect((await signIn(attacker, email, `wrong password ${i}`)).status).toBe(401);
    const locked = await signIn(attacker, email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe(String(15 * 60 - 5));
    expect(alertOf(await locked.text())).toBe(
      "Too many attempts. For your account's safety, please wait 15 minutes and try again.",
    );
    // The owner, from another address, waits out the email's delay (a minute), then signs in.
    const owner = new Browser(clock);
    owner.ip = '192.0.2.10';
    const waiting = await signIn(owner, email, PASSWORD);
    expect([waiting.status, waiting.headers.get('retry-after')]).toEqual([429, String(SIGNIN_EMAIL_DELAY_BASE_S)]);
    clock.advance(SIGNIN_EMAIL_DELAY_BASE_S * 1000);
    expect((await signIn(owner, email, PASSWORD)).status).toBe(303);
    // The stranger's address stays locked for this account until its window ends.
    expect((await signIn(attacker, email, PASSWORD)).status).toBe(429);
    clock.advance(15 * 60_000);
    const sameAddress = (): Browser => Object.assign(new Browser(clock), { ip: attacker.ip });
    expect((await signIn(sameAddress(), email, PASSWORD)).status).toBe(303);
    // A successful sign-in clears the pair's count.
    for (let i = 0; i < 4; i++) expect((await signIn(sameAddress(), email, 'wrong again!')).status).toBe(401);
    expect((await signIn(sameAddress(), email, PASSWORD)).status).toBe(303);
  });

  describe('per email, whatever the client address says', () => {
    let address = 0;
    /** A client claiming a new address each time, as anyone can where the address header is not trusted. */
    const fresh = (clock: TestClock): Browser =>
      Object.assign(new Browser(clock), { ip: `198.51.${Math.floor(address / 250) % 250}.${(address++ % 250) + 1}` });

    it('5 failures from 5 addresses: the 6th attempt, right password and new address, is 429 with a Retry-After that doubles up to 15 minutes', async () => {
      const clock = new TestClock(Date.UTC(2026, 10, 21, 15, 0, 5));
      const { email } = await signedUp({ clock });
      for (let i = 0; i < 5; i++) expect((await signIn(fresh(clock), email, 'wrong password')).status).toBe(401);
      const waits: number[] = [];
      for (let i = 0; i < 7; i++) {
        const early = await signIn(fresh(clock), email, PASSWORD);
        expect(early.status, `attempt ${i}`).toBe(429);
        waits.push(Number(early.headers.get('retry-after')));
        if (i === 0)
          expect(alertOf(await early.text())).toBe(
            "Too many attempts. For your account's safety, please wait 1 minute and try again.",
          );
        // Every attempt during the delay is refused, and none of them lengthens it.
        clock.advance(waits.at(-1)! * 1000 - 1000);
        const late = await signIn(fresh(clock), email, PASSWORD);
        expect([late.status, late.headers.get('retry-after')], `attempt ${i}`).toEqual([429, '1']);
        clock.advance(1000);
        expect((await signIn(fresh(clock), email, 'wrong password')).status).toBe(401);
      }
      expect(waits).toEqual([60, 120, 240, 480, 900, 900, 900]);
      expect(Math.max(...waits)).toBe(SIGNIN_EMAIL_DELAY_MAX_S);
      // After the delay the right password gets in, and the failures are forgotten: five more are free.
      clock.advance(SIGNIN_EMAIL_DELAY_MAX_S * 1000);
      expect((await signIn(fresh(clock), email, PASSWORD)).status).toBe(303);
      for (let i = 0; i < 5; i++) expect((await signIn(fresh(clock), email, 'wrong password')).status).toBe(401);
      expect((await signIn(fresh(clock), email, PASSWORD)).status).toBe(429);
    });

    it('counts unknown emails alike, in any letter case, and forgets failures under the limit after 15 minutes', async () => {
      const clock = new TestClock(Date.UTC(2026, 10, 21, 16, 0, 5));
      const nobody = uniqueEmail();
      for (let i = 0; i < 4; i++)
        expect((await signIn(fresh(clock), i % 2 ? nobody.toUpperCase() : nobody, 'wrong password')).status).toBe(401);
      clock.advance(15 * 60_000);
      for (let i = 0; i < 5; i++) expect((await signIn(fresh(clock), nobody, 'wrong password')).status).toBe(401);
      expect((await signIn(fresh(clock), ` ${nobody.toUpperCase()} `, 'wrong password')).status).toBe(429);
    });

    it('is exact under concurrency: of parallel wrong passwords, 5 are checked and the rest refused', async () => {
      const clock = new TestClock(Date.UTC(2026, 10, 21, 20, 0, 5));
      const { email } = await signedUp({ clock });
      const burst = await Promise.all(Array.from({ length: 12 }, () => signIn(fresh(clock), email, 'wrong password')));
      expect(burst.map((r) => r.status).sort()).toEqual([...Array<number>(5).fill(401), ...Array<number>(7).fill(429)]);
      // When the delay is over, exactly one of concurrent attempts runs.
      clock.advance(SIGNIN_EMAIL_DELAY_BASE_S * 1000);
      const after = await Promise.all(Array.from({ length: 5 }, () => signIn(fresh(clock), email, 'wrong password')));
      expect(after.map((r) => r.status).sort()).toEqual([401, 429, 429, 429, 429]);
    });
  });

  it('limits one IP to 30 sign-in attempts per window across accounts', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 13, 0, 5));
    // Addresses no other test uses: a Browser's random one may be another test's, whose attempts count here.
    const browser = new Browser(clock);
    browser.ip = '198.51.100.30';
    for (let i = 0; i < 30; i++) expect((await signIn(browser, uniqueEmail(), PASSWORD)).status).toBe(401);
    expect((await signIn(browser, uniqueEmail(), PASSWORD)).status).toBe(429);
    const elsewhere = new Browser(clock);
    elsewhere.ip = '198.51.100.31';
    expect((await signIn(elsewhere, uniqueEmail(), PASSWORD)).status).toBe(401);
  });

  it('limits one IP to 10 sign-ups per hour', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 14, 0, 5));
    const ip = '198.51.100.77';
    for (let i = 0; i < 11; i++) {
      const b = new Browser(clock);
      b.ip = ip;
      const form = await b.page('/signup');
      const res = await b.post('/signup', { _csrf: form.csrf, name: 'Many', email: uniqueEmail(), password: PASSWORD });
      expect(res.status, `sign-up ${i + 1}`).toBe(i < 10 ? 200 : 429);
    }
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as the IPv4 client it is', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 5));
    const signUpFrom = async (ip: string): Promise<number> => {
      const b = new Browser(clock);
      b.ip = ip;
      const form = await b.page('/signup');
      return (await b.post('/signup', { _csrf: form.csrf, name: 'Six', email: uniqueEmail(), password: PASSWORD }))
        .status;
    };
    // One host of one /64 takes a new address at each request, in any spelling.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push(
        await signUpFrom(i % 2 ? `2001:db8:4747:64::${(i + 1).toString(16)}` : `2001:0DB8:4747:0064:${i}:0:0:1`),
      );
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    // The neighbouring /64 is another client.
    expect(await signUpFrom('2001:db8:4747:65::1')).toBe(200);
    // 198.51.100.147 written three ways is one client.
    const mapped: number[] = [];
    for (let i = 0; i < 11; i++)
      mapped.push(await signUpFrom(['198.51.100.147', '::ffff:198.51.100.147', '::ffff:c633:6493'][i % 3]!));
    expect(mapped).toEqual([...Array<number>(10).fill(200), 429]);
  });

  it("counts the /64s of one /48 together too, under a limit a few times the /64's", async () => {
    // A holder of a /48 has 65,536 /64s: counted by /64 alone, each would be a fresh client. Requests for
    // mail are the cheapest of the three per-IP limits to fill (no password hashed, no mail for an unknown
    // address); sign-in and sign-up take the same /48 rule (the unit test below).
    const clock = new TestClock(Date.UTC(2026, 10, 24, 7, 0, 5));
    /** "Forgot password?" from each address in turn, as one browser (one form) whose address changes. */
    const forgot = async (...ips: string[]): Promise<number[]> => {
      const b = new Browser(clock);
      const form = await b.page('/forgot-password');
      const statuses: number[] = [];
      for (const ip of ips) {
        b.ip = ip;
        statuses.push((await b.post('/forgot-password', { _csrf: form.csrf, email: uniqueEmail() })).status);
      }
      return statuses;
    };
    const perSubnet = MAIL_REQUESTS_PER_IP.max;
    const statuses: number[] = [];
    // Each /64 stays within its own limit; together they fill the /48's.
    for (let s = 0; s < MAIL_REQUESTS_PER_IP6_48.max / perSubnet; s++)
      statuses.push(...(await forgot(...Array.from({ length: perSubnet }, (_, i) => `2001:db8:4848:${s}::${i + 1}`))));
    expect(statuses).toEqual(Array<number>(MAIL_REQUESTS_PER_IP6_48.max).fill(200));
    // A /64 of the same /48 not used yet is refused; another /48 is another client.
    expect(await forgot('2001:db8:4848:ffff::1', '2001:db8:4849::1')).toEqual([429, 200]);
  });

  it('each per-IP rule of an IPv6 client has a /48 bucket beside its /64 one; IPv4 and unknown clients have none', () => {
    const a = '2001:db8:4848:1::1';
    const b = '2001:db8:4848:2::1';
    const wide = (rules: ThrottleRule[]) => rules.filter((r) => r.bucket.endsWith('::/48'));
    for (const [rules, rule] of [
      [signInRules, SIGNIN_PER_IP6_48],
      [signUpRules, SIGNUP_PER_IP6_48],
      [mailRequestRules, MAIL_REQUESTS_PER_IP6_48],
    ] as const) {
      expect(wide(rules(a, 'x@example.com'))).toEqual([
        expect.objectContaining({ max: rule.max, windowMs: rule.windowMs }),
      ]);
      expect(wide(rules(a, 'x@example.com'))[0]!.bucket).toBe(wide(rules(b, 'y@example.com'))[0]!.bucket);
      expect(wide(rules('198.51.100.9', 'x@example.com'))).toEqual([]);
      expect(wide(rules('::ffff:198.51.100.9', 'x@example.com'))).toEqual([]);
      expect(wide(rules(UNKNOWN_CLIENT, 'x@example.com'))).toEqual([]);
    }
    // Between 8 and 16 times the /64's: a /48 shared by many honest people does not hit it easily.
    for (const [narrow, broad] of [
      [SIGNIN_PER_IP, SIGNIN_PER_IP6_48],
      [SIGNUP_PER_IP, SIGNUP_PER_IP6_48],
      [MAIL_REQUESTS_PER_IP, MAIL_REQUESTS_PER_IP6_48],
    ] as const) {
      expect(broad.windowMs).toBe(narrow.windowMs);
      expect(broad.max / narrow.max).toBeGreaterThanOrEqual(8);
      expect(broad.max / narrow.max).toBeLessThanOrEqual(16);
    }
  });

  it('sign-up does not tell a taken email from a new one, and each probe spends the per-IP sign-up limit', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 17, 0, 5));
    const { email } = await signedUp({ clock });
    const probe = async (address: string): Promise<Response> => {
      const b = new Browser(clock);
      b.ip = '198.51.100.201';
      const form = await b.page('/signup');
      return b.post('/signup', { _csrf: form.csrf, name: 'Prober', email: address, password: PASSWORD });
    };
    for (let i = 0; i < 10; i++)
      expect((await probe(i % 2 ? email : uniqueEmail())).status, `probe ${i + 1}`).toBe(200);
    const [taken, free] = [await probe(email), await probe(uniqueEmail())];
    expect([taken.status, free.status]).toEqual([429, 429]);
    expect(alertOf(await taken.text())).toBe(alertOf(await free.text()));
  });
});

// Each test signs up 11 to 33 times, each sign-up hashing a password and mailing its link: more than the
// default 5 s on a loaded machine.
describe('the client address (TRUSTED_IP_HEADER)', { timeout: 20_000 }, () => {
  /** Sign-ups as from one client that sends a new CF-Connecting-IP each time, as anyone can off Cloudflare. */
  async function signUps(
    count: number,
    clock: TestClock,
    vars: Record<string, unknown>,
    headers: () => Record<string, string>,
    email: () => string = uniqueEmail,
  ): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const b = new Browser(clock);
      b.env = vars;
      b.ip = `203.0.113.${i + 1}`;
      const form = await b.page('/signup');
      statuses.push(
        (await b.post('/signup', { _csrf: form.csrf, name: 'Client', email: email(), password: PASSWORD }, headers()))
          .status,
      );
    }
    return statuses;
  }
  const tenThenRefused = [...Array<number>(10).fill(200), 429];

  it('is read from the configured header only: a spoofed CF-Connecting-IP does not make a new client', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 18, 0, 5));
    expect(await signUps(11, clock, { TRUSTED_IP_HEADER: 'X-Real-IP' }, () => ({ 'x-real-ip': '192.0.2.44' }))).toEqual(
      tenThenRefused,
    );
    expect(await signUps(1, clock, { TRUSTED_IP_HEADER: 'X-Real-IP' }, () => ({ 'x-real-ip': '192.0.2.45' }))).toEqual([
      200,
    ]);
    // In a list, the last entry (appended by the trusted proxy) counts, not what the client wrote first.
    let spoof = 0;
    const forwarded = () => ({ 'x-forwarded-for': `10.0.0.${++spoof}, 192.0.2.46` });
    expect(await signUps(11, clock, { TRUSTED_IP_HEADER: 'X-Forwarded-For' }, forwarded)).toEqual(tenThenRefused);
  });

  it('when empty, or when the header is missing, counts sign-ups per email and all together: one client holds up nobody else', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 11, 0, 5));
    expect(await signUps(11, clock, { TRUSTED_IP_HEADER: '' }, () => ({}))).toEqual(Array<number>(11).fill(200));
    const one = uniqueEmail();
    expect(
      await signUps(
        SIGNUP_PER_EMAIL.max + 1,
        clock,
        { TRUSTED_IP_HEADER: '' },
        () => ({}),
        () => one,
      ),
    ).toEqual([...Array<number>(SIGNUP_PER_EMAIL.max).fill(200), 429]);
    expect(SIGNUP_UNTRUSTED_TOTAL.max).toBeGreaterThanOrEqual(50 * SIGNUP_PER_EMAIL.max);
    // The operator is told, once per isolate, that the header they named brings no address.
    const other = uniqueEmail();
    const { result, lines } = await captureConsole('warn', () =>
      signUps(
        SIGNUP_PER_EMAIL.max + 1,
        clock,
        { TRUSTED_IP_HEADER: 'X-Real-IP' },
        () => ({}),
        () => other,
      ),
    );
    expect(result).toEqual([...Array<number>(SIGNUP_PER_EMAIL.max).fill(200), 429]);
    expect(lines.every((l) => l.startsWith('no usable client address in X-Real-IP'))).toBe(true);
  });

  it('when no address is trusted, sign-ins are limited per email (its delay) and all together, never by one bucket a client fills', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 12, 0, 5));
    const { email } = await signedUp({ clock });
    const anonymous = () => Object.assign(new Browser(clock), { env: { TRUSTED_IP_HEADER: '' } });
    // 31 wrong sign-ins to as many emails, from what looks like one client: SIGNIN_PER_IP would refuse the 31st.
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await signIn(anonymous(), uniqueEmail(), 'a wrong password')).status);
    expect(statuses).toEqual(Array<number>(31).fill(401));
    expect((await signIn(anonymous(), email, PASSWORD)).status).toBe(303);
    // Wrong passwords for one email meet its growing delay, as from any number of addresses; none is a hard lock.
    for (let i = 0; i < SIGNIN_EMAIL_FREE_FAILURES; i++)
      expect((await signIn(anonymous(), email, `wrong ${i}`)).status).toBe(401);
    const waiting = await signIn(anonymous(), email, PASSWORD);
    expect([waiting.status, waiting.headers.get('retry-after')]).toEqual([429, String(SIGNIN_EMAIL_DELAY_BASE_S)]);
    clock.advance(SIGNIN_EMAIL_DELAY_BASE_S * 1000);
    expect((await signIn(anonymous(), email, PASSWORD)).status).toBe(303);
    expect(SIGNIN_UNTRUSTED_TOTAL.max).toBeGreaterThanOrEqual(10 * 30);
  });

  it('without a trusted address, "forgot password" counts per email (and all together), so one client blocks nobody else', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 10, 0, 5));
    const forgot = async (email: string): Promise<number> => {
      const b = new Browser(clock);
      b.env = { TRUSTED_IP_HEADER: '' };
      const form = await b.page('/forgot-password');
      return (await b.post('/forgot-password', { _csrf: form.csrf, email })).status;
    };
    const target = uniqueEmail();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await forgot(target));
    expect(statuses).toEqual([
      ...Array<number>(MAIL_REQUESTS_PER_EMAIL.max).fill(200),
      ...Array<number>(11 - MAIL_REQUESTS_PER_EMAIL.max).fill(429),
    ]);
    // Everyone else's reset still goes through, as does "send the link again".
    for (let i = 0; i < 3; i++) expect(await forgot(uniqueEmail())).toBe(200);
    const b = new Browser(clock);
    b.env = { TRUSTED_IP_HEADER: '' };
    const form = await b.page('/signin');
    expect((await b.post('/verify-email/resend', { _csrf: form.csrf, email: uniqueEmail() })).status).toBe(200);
    // All of them together have a cap, generous but finite.
    expect(MAIL_REQUESTS_UNTRUSTED_TOTAL.max).toBeGreaterThanOrEqual(100 * MAIL_REQUESTS_PER_EMAIL.max);
  });

  it('self-hosted: CF-Connecting-IP is ignored unless TRUSTED_IP_HEADER names it', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 21, 0, 5));
    // As workerd binds them: every var of wrangler.toml, null when its environment variable is unset.
    const workerd = (trusted: string | null) =>
      selfhostEnv({
        ...env,
        TRUSTED_IP_HEADER: trusted,
        VAR_DEFAULTS: { TRUSTED_IP_HEADER: 'CF-Connecting-IP' },
      } as unknown as SelfhostEnv);
    expect((workerd(null) as { TRUSTED_IP_HEADER?: string }).TRUSTED_IP_HEADER).toBe('');
    // A client sending a new CF-Connecting-IP each time is no new client: sign-ups of one email stop at
    // SIGNUP_PER_EMAIL, as from one client...
    let spoof = 0;
    const spoofed = () => ({ 'cf-connecting-ip': `198.18.0.${++spoof}` });
    const one = uniqueEmail();
    const count = SIGNUP_PER_EMAIL.max + 1;
    expect(
      await signUps(count, clock, workerd(null) as unknown as Record<string, unknown>, spoofed, () => one),
    ).toEqual([...Array<number>(SIGNUP_PER_EMAIL.max).fill(200), 429]);
    // ...unless the operator says the header is set by a proxy they trust: then each address is a client.
    const two = uniqueEmail();
    expect(
      await signUps(
        count,
        clock,
        workerd('CF-Connecting-IP') as unknown as Record<string, unknown>,
        spoofed,
        () => two,
      ),
    ).toEqual(Array<number>(count).fill(200));
  });
});

describe('console pages', () => {
  it('carry a strict Content-Security-Policy and no-store', async () => {
    const { browser } = await signedUp();
    const anonymous = new Browser();
    for (const [who, path] of [
      [browser, '/'],
      [browser, '/keys'],
      [browser, '/try'],
      [browser, '/docs'],
      [anonymous, '/signin'],
      [anonymous, '/signup'],
    ] as const) {
      const res = await who.fetch(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      expect(res.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('content-type'), path).toBe('text/html; charset=UTF-8');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      const html = await res.text();
      expect(html, path).not.toMatch(/<script>|style="/);
    }
  });

  it('carry Permissions-Policy, and Strict-Transport-Security over HTTPS only, redirects included', async () => {
    const { browser } = await signedUp();
    const anonymous = new Browser();
    for (const [who, path, status] of [
      [browser, '/', 200],
      [browser, '/keys', 200],
      [browser, '/signin', 303],
      [anonymous, '/signin', 200],
      [anonymous, '/signup', 200],
      [anonymous, '/keys', 303],
      [anonymous, '/docs', 200],
    ] as const) {
      const res = await who.fetch(path);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('strict-transport-security'), path).toBe('max-age=31536000');
      for (const feature of ['camera', 'microphone', 'geolocation', 'payment', 'usb'])
        expect(res.headers.get('permissions-policy'), path).toContain(`${feature}=()`);
    }
    const local = await anonymous.fetch('http://localhost:8787/signin');
    expect(local.status).toBe(200);
    expect(local.headers.get('strict-transport-security')).toBeNull();
    expect(local.headers.get('permissions-policy')).toContain('camera=()');
  });
});
