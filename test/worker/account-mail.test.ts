// Accounts a person can keep: sign-up mails a confirmation link, makes no account until it is used and signs
// nobody in; members left unconfirmed by older sign-ups cannot sign in or use the console API, and a forgotten password is reset by a mailed single-use link.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { RESET_LINK_TTL_MS, VERIFY_LINK_TTL_MS } from '../../src/auth/limits.ts';
import { newAccountId, sha256Hex } from '../../src/accounts/keys.ts';
import { hashPassword } from '../../src/auth/password.ts';
import { createSession } from '../../src/auth/sessions.ts';
import { captureConsole, makeKey, TestClock } from './helpers.ts';
import { Browser, confirmEmail, ORIGIN, PASSWORD, signedUp, uniqueEmail } from './console-helpers.ts';
import { enterpriseTeam, join } from './team-helpers.ts';
import { inbox, linkIn, mailsTo } from './mail-helpers.ts';

const alertOf = (html: string): string => (/role="alert">([^<]*)</.exec(html)?.[1] ?? '').replaceAll('&#39;', "'");
/** A page's HTML without what differs between any two answers: the email shown, CSRF tokens. */
const sameness = (html: string, email: string) =>
  html.replaceAll(email, 'ADDRESS').replace(/(content|value)="[A-Za-z0-9_-]{43}"/g, '$1=""');

async function signUp(browser: Browser, email: string, password = PASSWORD): Promise<Response> {
  const form = await browser.page('/signup');
  return browser.post('/signup', { _csrf: form.csrf, name: 'Mary Shelley', email, password });
}

async function signIn(browser: Browser, email: string, password: string): Promise<Response> {
  const form = await browser.page('/signin');
  return browser.post('/signin', { _csrf: form.csrf, email, password });
}

async function member(email: string) {
  return env.DB.prepare('SELECT id, account_id, email_verified FROM members WHERE email = ? COLLATE NOCASE')
    .bind(email)
    .first<{ id: string; account_id: string; email_verified: number }>();
}

/**
 * A member left unverified by a sign-up from before migration 0012, which made the account at once (with
 * the confirmation still to come): such members may still exist.
 */
async function legacyUnverified(email: string): Promise<{ id: string; account_id: string }> {
  const accountId = newAccountId();
  const id = `mem_${accountId.slice(4)}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO accounts (id, email, name, image_tier, tools_tier, created_at, password_hash) VALUES (?, ?, 'Early Bird', 'free', 'free', ?, ?)",
    ).bind(accountId, email, Date.now(), await hashPassword(PASSWORD, 1000)),
    env.DB.prepare('UPDATE members SET email_verified = 0 WHERE id = ?').bind(id),
  ]);
  return { id, account_id: accountId };
}

async function auditActions(accountId: string): Promise<string[]> {
  const rows = await env.DB.prepare('SELECT action FROM audit_logs WHERE account_id = ? ORDER BY seq')
    .bind(accountId)
    .all<{ action: string }>();
  return rows.results.map((r) => r.action);
}

describe('email verification', () => {
  it('sign-up signs nobody in, says "check your email", and mails a 24-hour link that confirms and signs in once', async () => {
    const browser = new Browser();
    const email = uniqueEmail();
    const res = await signUp(browser, email);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<h1>Check your email</h1>');
    expect(browser.cookies.has('__Host-sr_session')).toBe(false);
    // No account yet, so no member holds the address.
    expect(await member(email)).toBeNull();

    const [mail, ...more] = await mailsTo(email);
    expect(more).toEqual([]);
    expect(mail!.subject).toBe('Confirm your email address for Shrinkray');
    expect(mail!.text).toContain('expires in 24 hours');
    expect(mail!.html).toContain('Shrinkray');
    const link = linkIn(mail!, '/verify-email?token=');
    expect(mail!.html).toContain(link);
    // The token is stored hashed, never as it is in the mail.
    const token = new URL(link).searchParams.get('token')!;
    expect(await env.DB.prepare('SELECT 1 FROM pending_signups WHERE token_hash = ?').bind(token).first()).toBeNull();
    expect(
      await env.DB.prepare('SELECT 1 FROM pending_signups WHERE token_hash = ?')
        .bind(await sha256Hex(token))
        .first(),
    ).not.toBeNull();

    // Opening the link only shows a button (a scanner that opens links uses nothing up).
    const page = await browser.page(new URL(link).pathname + new URL(link).search);
    expect(page.res.status).toBe(200);
    expect(await member(email)).toBeNull();

    const confirmed = await confirmEmail(browser, link);
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe('/keys');
    expect(browser.cookies.has('__Host-sr_session')).toBe(true);
    expect((await browser.page('/keys')).res.status).toBe(200);
    const who = await member(email);
    expect(who?.email_verified).toBe(1);
    expect(await auditActions(who!.account_id)).toEqual(['member.email_verified', 'session.signed_in']);

    // Dead: its page says so at once (410), and so does a post of its button's form.
    const again = await confirmEmail(new Browser(), link);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('The confirmation link was used already or has expired.');
    const stranger = new Browser();
    const form = await stranger.page('/signin');
    expect((await stranger.post('/verify-email', { _csrf: form.csrf, token })).status).toBe(410);
  });

  it('one link opened twice at once signs in once', async () => {
    const email = uniqueEmail();
    await signUp(new Browser(), email);
    const link = linkIn((await mailsTo(email))[0]!, '/verify-email?token=');
    const [a, b] = await Promise.all([confirmEmail(new Browser(), link), confirmEmail(new Browser(), link)]);
    expect([a.status, b.status].sort()).toEqual([303, 410]);
    const who = (await member(email))!;
    const sessions = await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions WHERE member_id = ?')
      .bind(who.id)
      .first<{ n: number }>();
    expect(sessions?.n).toBe(1);
  });

  it('a link is dead after 24 hours (410), and a new one can be asked for', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 22, 9, 0, 5));
    const browser = new Browser(clock);
    const email = uniqueEmail();
    await signUp(browser, email);
    const link = linkIn((await mailsTo(email))[0]!, '/verify-email?token=');
    clock.advance(VERIFY_LINK_TTL_MS);
    expect((await confirmEmail(browser, link)).status).toBe(410);
    const form = await browser.page('/signin');
    const resend = await browser.post('/verify-email/resend', { _csrf: form.csrf, email });
    expect(resend.status).toBe(200);
    const mails = await mailsTo(email, 2);
    expect(mails).toHaveLength(2);
    expect((await confirmEmail(browser, linkIn(mails[1]!, '/verify-email?token='))).status).toBe(303);
  });

  it('a sign-up holds no address and tells nothing at sign-in: a pending address answers as a free or a registered one', async () => {
    // A stranger signs up with the target address and a password of theirs, then signs in with it.
    const theirs = 'the strangers own password';
    const free = uniqueEmail();
    const stranger = new Browser();
    expect((await signUp(stranger, free, theirs)).status).toBe(200);
    const pending = await signIn(stranger, free, theirs);
    const { email: registered } = await signedUp();
    expect((await signUp(new Browser(), registered, theirs)).status).toBe(200);
    const taken = await signIn(new Browser(), registered, theirs);
    const unknownEmail = uniqueEmail();
    const unknown = await signIn(new Browser(), unknownEmail, theirs);
    expect([pending.status, taken.status, unknown.status]).toEqual([401, 401, 401]);
    const pages = [
      sameness(await pending.text(), free),
      sameness(await taken.text(), registered),
      sameness(await unknown.text(), unknownEmail),
    ];
    expect(new Set(pages).size).toBe(1);
    expect(alertOf(pages[0]!)).toContain('If you signed up, confirm your email first');
    // The address is not held: no member has it until a link is used.
    expect(await member(free)).toBeNull();
    // Its owner signs up with their own password and confirms with their own link.
    const owner = new Browser();
    expect((await signUp(owner, free, PASSWORD)).status).toBe(200);
    const mails = await mailsTo(free, 2);
    expect(mails).toHaveLength(2);
    expect((await confirmEmail(owner, linkIn(mails[1]!, '/verify-email?token='))).status).toBe(303);
    expect((await member(free))?.email_verified).toBe(1);
    expect((await signIn(new Browser(), free, PASSWORD)).status).toBe(303);
    // The stranger's pending sign-up died with it: its link is gone, and its password opens nothing.
    expect((await confirmEmail(new Browser(), linkIn(mails[0]!, '/verify-email?token='), theirs)).status).toBe(410);
    expect((await signIn(new Browser(), free, theirs)).status).toBe(401);
  });

  it("a stranger's sign-up link that reaches the mailbox's owner makes no account without the stranger's password", async () => {
    // The stranger signs up with the owner's address; "send again" (the owner's, or anyone's) mails its link.
    const theirs = 'the strangers own password';
    const email = uniqueEmail();
    expect((await signUp(new Browser(), email, theirs)).status).toBe(200);
    const link = linkIn((await mailsTo(email))[0]!, '/verify-email?token=');
    // The owner opens it: the page asks for the sign-up's password, which the owner does not know.
    const owner = new Browser();
    const page = await owner.page(new URL(link).pathname + new URL(link).search);
    expect(page.html).toContain('name="password"');
    const refused = await confirmEmail(owner, link, PASSWORD);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('sign up yourself instead');
    expect(await member(email)).toBeNull();
    // The owner's own sign-up then makes the account, with the owner's password.
    expect((await signUp(owner, email, PASSWORD)).status).toBe(200);
    expect((await confirmEmail(owner, linkIn((await mailsTo(email, 2))[1]!, '/verify-email?token='))).status).toBe(303);
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(303);
    expect((await signIn(new Browser(), email, theirs)).status).toBe(401);
  });

  it('a member left unverified by an older sign-up signs in as a wrong password would; its link and "send again" still work', async () => {
    const email = uniqueEmail();
    await legacyUnverified(email);
    const browser = new Browser();
    const right = await signIn(browser, email, PASSWORD);
    const wrong = await signIn(browser, email, 'not the password at all');
    expect([right.status, wrong.status]).toEqual([401, 401]);
    const html = await right.text();
    expect(sameness(html, email)).toBe(sameness(await wrong.text(), email));
    expect(alertOf(html)).toContain('If you signed up, confirm your email first');
    expect(html).toContain('action="/verify-email/resend"');
    expect(browser.cookies.has('__Host-sr_session')).toBe(false);
    const form = await browser.page('/signin');
    expect((await browser.post('/verify-email/resend', { _csrf: form.csrf, email })).status).toBe(200);
    const confirmed = await confirmEmail(new Browser(), linkIn((await mailsTo(email))[0]!, '/verify-email?token='));
    expect(confirmed.status).toBe(303);
    expect((await member(email))?.email_verified).toBe(1);
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(303);
  });

  it('"send the link again" answers the same for unverified, verified and unknown emails; mails only the first; rate-limited per IP', async () => {
    const unverified = uniqueEmail();
    await signUp(new Browser(), unverified);
    const { email: verified } = await signedUp();
    const unknown = uniqueEmail();
    const browser = new Browser();
    const pages: string[] = [];
    for (const email of [unverified, verified, unknown]) {
      const form = await browser.page('/signin');
      const res = await browser.post('/verify-email/resend', { _csrf: form.csrf, email });
      expect(res.status).toBe(200);
      pages.push(sameness(await res.text(), email));
    }
    expect(new Set(pages).size).toBe(1);
    expect(await mailsTo(unverified, 2)).toHaveLength(2);
    expect(await inbox(verified)).toHaveLength(1);
    expect(await inbox(unknown)).toHaveLength(0);

    const clock = new TestClock(Date.UTC(2026, 10, 22, 10, 0, 5));
    const flood = new Browser(clock);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const form = await flood.page('/signin');
      statuses.push((await flood.post('/verify-email/resend', { _csrf: form.csrf, email: uniqueEmail() })).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
  });

  it("the console API refuses an unverified member's session with 403 email_unverified", async () => {
    const email = uniqueEmail();
    const who = await legacyUnverified(email);
    const session = await createSession(env.DB, { accountId: who.account_id, memberId: who.id }, Date.now(), {
      actor: { type: 'member', id: who.id },
      ip: null,
      userAgent: null,
    });
    const browser = new Browser();
    browser.cookies.set('__Host-sr_session', session.token);
    for (const path of ['/api/v1/keys', '/api/v1/usage']) {
      const res = await browser.json(path);
      expect(res.status, path).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code, path).toBe('email_unverified');
    }
    // A page ends such a session and sends the person to sign in, which asks them to confirm first.
    const page = await browser.fetch('/keys');
    expect([page.status, page.headers.get('location')]).toEqual([303, '/signin']);
    expect(await env.DB.prepare('SELECT 1 FROM sessions WHERE member_id = ?').bind(who.id).first()).toBeNull();
  });

  it('members from before migration 0010 are verified: the column it adds defaults to 1, as SQLite fills existing rows', async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0010_'));
    expect(migration?.queries.join('\n')).toContain(
      'ALTER TABLE members ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1',
    );
    const column = (
      await env.DB.prepare('PRAGMA table_info(members)').all<{ name: string; dflt_value: string; notnull: number }>()
    ).results.find((c) => c.name === 'email_verified');
    expect([column?.dflt_value, column?.notnull]).toEqual(['1', 1]);
  });

  it('accounts made by the operator and members who joined by a mailed invitation are verified', async () => {
    const key = await makeKey();
    const row = await env.DB.prepare('SELECT email_verified FROM members WHERE account_id = ?')
      .bind(key.accountId)
      .first<{ email_verified: number }>();
    expect(row?.email_verified).toBe(1);
    const team = await enterpriseTeam();
    const joined = await join(team, 'developer');
    expect((await member(joined.email))?.email_verified).toBe(1);
    const [invitation, ...more] = await mailsTo(joined.email);
    expect(more).toEqual([]);
    expect(invitation!.subject).toMatch(/^You are invited to .* on Shrinkray$/);
    expect(invitation!.text).toContain('as a developer');
    expect(linkIn(invitation!, '/invitations/')).toMatch(/^https:\/\/api\.shrinkray\.test\/invitations\/[\w-]{43}$/);
  });

  it('sign-up with an email of a domain an account\'s SSO proved is refused with "sign in with SSO"', async () => {
    const key = await makeKey();
    const domain = `sso-${crypto.randomUUID().slice(0, 8)}.example`;
    await env.DB.prepare(
      "INSERT INTO sso_domains (domain, account_id, txt_value, verified_at, created_at) VALUES (?, ?, 'proved', 1, 1)",
    )
      .bind(domain, key.accountId)
      .run();
    const email = `someone@${domain}`;
    const res = await signUp(new Browser(), email);
    expect(res.status).toBe(403);
    expect(alertOf(await res.text())).toContain('Sign in with SSO');
    expect(await member(email)).toBeNull();
    expect(await inbox(email)).toHaveLength(0);
  });

  it('a mail that cannot be sent is "send again" on the page, never a 500', async () => {
    const browser = new Browser();
    browser.env = { SMTP_PORT: '9' };
    const email = uniqueEmail();
    const { result: res, lines } = await captureConsole('error', () => signUp(browser, email));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(alertOf(html.replaceAll('&quot;', '"'))).toBe(
      'We could not send the mail just now. Please use "Send the link again" in a minute.',
    );
    expect(html).toContain('action="/verify-email/resend"');
    // Only what happened: no "we sent a link" beside "we could not send".
    expect(html).not.toContain('We sent a link');
    expect(lines.join('\n')).toContain('mail_not_sent reason=failed');
  });

  it('a server without mail says so once, with what its operator sets, on sign-up and on "send again"', async () => {
    const browser = new Browser();
    browser.env = { SMTP_HOST: '' };
    const email = uniqueEmail();
    const { result: res } = await captureConsole('error', () => signUp(browser, email));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('This server cannot send mail');
    for (const variable of ['PUBLIC_URL', 'SMTP_HOST', 'MAIL_FROM']) expect(html).toContain(variable);
    expect(html).not.toContain('We sent a link');
    expect(html).not.toContain('could not send the mail just now');
    expect(html).not.toContain('action="/verify-email/resend"');
    // A registered address reads the very same page.
    const { email: taken } = await signedUp();
    const again = await captureConsole('error', () => signUp(browser, taken));
    const words = (page: string, address: string) =>
      /<h1>This server cannot send mail[\s\S]*Back to sign in/.exec(page)?.[0].replaceAll(address, 'ADDRESS');
    expect(words(await again.result.text(), taken)).toBe(words(html, email));
    const form = await browser.page('/signin');
    const resend = await browser.post('/verify-email/resend', { _csrf: form.csrf, email });
    expect(await resend.text()).toContain('This server cannot send mail');
  });
});

describe('password reset', () => {
  async function forgot(browser: Browser, email: string): Promise<Response> {
    const form = await browser.page('/forgot-password');
    return browser.post('/forgot-password', { _csrf: form.csrf, email });
  }

  it('the same words for known and unknown emails; the known one gets a 1-hour link', async () => {
    const { email } = await signedUp();
    const unknown = uniqueEmail();
    const browser = new Browser();
    const known = await forgot(browser, email);
    const other = await forgot(browser, unknown);
    expect([known.status, other.status]).toEqual([200, 200]);
    expect(sameness(await known.text(), email)).toBe(sameness(await other.text(), unknown));
    expect(await inbox(unknown)).toHaveLength(0);
    const mail = (await mailsTo(email, 2))[1]!;
    expect(mail.subject).toBe('Reset your Shrinkray password');
    expect(mail.text).toContain('expires in 60 minutes');
    expect(linkIn(mail, '/reset-password?token=')).toMatch(
      /^https:\/\/api\.shrinkray\.test\/reset-password\?token=[\w-]{43}$/,
    );
  });

  it('a new password ends every session, clears the per-email delay, and the link works once (410 after)', async () => {
    const { browser: signedIn, email } = await signedUp();
    const who = (await member(email))!;
    // Five wrong passwords start the per-email delay: even the right one is refused for a while.
    const guesser = new Browser();
    for (let i = 0; i < 5; i++) await signIn(guesser, email, `wrong password ${i}`);
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(429);

    const browser = new Browser();
    await forgot(browser, email);
    const link = new URL(linkIn((await mailsTo(email, 2))[1]!, '/reset-password?token='));
    const page = await browser.page(link.pathname + link.search);
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('name="password"');
    const token = link.searchParams.get('token')!;
    const short = await browser.post('/reset-password', { _csrf: page.csrf, token, password: 'short' });
    expect(short.status).toBe(400);
    const reset = await browser.post('/reset-password', {
      _csrf: page.csrf,
      token,
      password: 'a brand new passphrase',
    });
    expect(reset.status).toBe(303);
    expect(reset.headers.get('location')).toBe('/signin?reset=done');

    expect((await signedIn.page('/keys')).res.status).toBe(303);
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(), email, 'a brand new passphrase')).status).toBe(303);
    expect(await auditActions(who.account_id)).toContain('member.password_reset');

    const second = await browser.post('/reset-password', {
      _csrf: page.csrf,
      token,
      password: 'yet another passphrase',
    });
    expect(second.status).toBe(410);
    expect(await second.text()).toContain('href="/forgot-password"');
    expect((await browser.page(link.pathname + link.search)).res.status).toBe(410);
  });

  it('a link is dead after an hour (410), and a reset also confirms an unverified address', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 22, 11, 0, 5));
    const browser = new Browser(clock);
    const email = uniqueEmail();
    await legacyUnverified(email);
    await forgot(browser, email);
    const old = new URL(linkIn((await mailsTo(email, 1))[0]!, '/reset-password?token='));
    clock.advance(RESET_LINK_TTL_MS);
    expect((await browser.page(old.pathname + old.search)).res.status).toBe(410);
    await forgot(browser, email);
    const link = new URL(linkIn((await mailsTo(email, 2))[1]!, '/reset-password?token='));
    const page = await browser.page(link.pathname + link.search);
    const token = link.searchParams.get('token')!;
    expect(
      (await browser.post('/reset-password', { _csrf: page.csrf, token, password: 'chosen by the mailbox owner' }))
        .status,
    ).toBe(303);
    expect((await member(email))?.email_verified).toBe(1);
  });

  it('the sign-in page links to "Forgot password?"', async () => {
    const { html } = await new Browser().page('/signin');
    expect(html).toContain('<a href="/forgot-password">Forgot password?</a>');
    expect(ORIGIN).toBe('https://api.shrinkray.test');
  });
});
