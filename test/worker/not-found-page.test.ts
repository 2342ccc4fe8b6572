// A browser that mistypes an address gets a page in the console's look with a way on; API clients, and
// anything under /api/, keep the JSON envelope. The common guesses go to the real pages.
import { describe, expect, it } from 'vitest';
import { Browser, signedUp } from './console-helpers.ts';
import { call } from './helpers.ts';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('a mistyped address', () => {
  it('is an HTML 404 page for a browser, with links to sign in, the docs and home', async () => {
    for (const path of ['/settings', '/pricing', '/keys/nothing/here']) {
      const res = await call(path, { headers: { accept: BROWSER_ACCEPT } });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      const html = await res.text();
      expect(html).toContain('<h1>Page not found</h1>');
      expect(html).toContain(`<code>${path}</code>`);
      expect(html).toMatch(/<link rel="stylesheet" href="\/assets\/[^"]+\.css">/);
      for (const href of ['/', '/signin', '/docs']) expect(html, href).toContain(`href="${href}"`);
      expect(html).toContain('name="viewport"');
    }
  });

  it('escapes the address it names', async () => {
    const res = await call('/%3Cscript%3Ex', { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).not.toContain('<script>x');
  });

  it("shows a signed-in member the console's navigation", async () => {
    const { browser } = await signedUp();
    const res = await browser.fetch('/settings', { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).toContain('Sign out');
    expect(html).toContain('href="/keys"');
  });

  it('stays the JSON envelope for API clients and under /api/', async () => {
    for (const [path, accept] of [
      ['/settings', 'application/json'],
      ['/settings', '*/*'],
      ['/api/v1/nothing', BROWSER_ACCEPT],
      ['/api/nothing', BROWSER_ACCEPT],
      ['/api', BROWSER_ACCEPT],
    ] as const) {
      const res = await call(path, { headers: { accept } });
      expect(res.status, `${path} ${accept}`).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  it('keeps a wrong method a JSON 405, browser or not', async () => {
    const res = await call('/signout', { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('the common guesses', () => {
  it('redirect to the real pages, query kept', async () => {
    const browser = new Browser();
    for (const [guess, page] of [
      ['/login', '/signin'],
      ['/log-in', '/signin'],
      ['/sign-in', '/signin'],
      ['/register', '/signup'],
      ['/sign-up', '/signup'],
      ['/dashboard', '/'],
    ] as const) {
      const res = await browser.fetch(`${guess}?next=%2Fkeys`, { headers: { accept: BROWSER_ACCEPT } });
      expect(res.status, guess).toBe(308);
      expect(res.headers.get('location'), guess).toBe(`${page}?next=%2Fkeys`);
      const slash = await browser.fetch(`${guess}/`);
      expect(slash.status, `${guess}/`).toBe(308);
    }
  });
});
