// Usage as the console shows it (per-day counts from each key's meter), and the "Try it" compressor
// that runs on the account's own console meter.
import { describe, expect, it } from 'vitest';
import { call, TestClock, toolsHeaders } from './helpers.ts';
import { Browser, PASSWORD, signedUp } from './console-helpers.ts';
import { bodyBytes, compressCall, form, jpegOf, photo, pngOf } from './image-fixtures.ts';

interface UsageJson {
  data: {
    days: string[];
    account: { requests: number[]; compressions: number[] };
    keys: {
      id: string;
      name: string;
      kind: string;
      revoked_at: string | null;
      requests: number[];
      compressions: number[];
      windows: Record<string, { limit: number | null; used: number; remaining: number | null }>;
    }[];
  };
}

const DAY = 86_400_000;
const PNG = pngOf(photo(48, 32));

async function newKey(
  browser: Browser,
  csrf: string,
  scopes = ['image', 'tools'],
): Promise<{ id: string; key: string }> {
  const res = await browser.json('/api/v1/keys', {
    method: 'POST',
    csrf,
    body: { name: `key ${scopes.join('+')}`, scopes },
  });
  return ((await res.json()) as { data: { id: string; key: string } }).data;
}

const usage = async (browser: Browser): Promise<UsageJson['data']> =>
  ((await (await browser.json('/api/v1/usage')).json()) as UsageJson).data;

function consoleCompress(browser: Browser, csrf: string | undefined, parts: Record<string, string | Uint8Array>) {
  const headers: Record<string, string> = { origin: 'https://api.shrinkray.test' };
  if (csrf) headers['x-csrf-token'] = csrf;
  return browser.fetch('/api/v1/console/compress', {
    method: 'POST',
    headers,
    body: form({ filename: 'try.png', ...parts }),
  });
}

describe('usage per day', () => {
  it('counts Tools API requests (any status but 429, never /health) and compressions (200s only) per key and per day', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 20, 10, 0, 0));
    const { browser, csrf, email } = await signedUp({ clock });
    const a = await newKey(browser, csrf);
    const b = await newKey(browser, csrf, ['tools']);
    const opts = { clock };

    expect((await call('/api/v1/tools?limit=1', { headers: toolsHeaders(a.key), ...opts })).status).toBe(200);
    expect((await call('/api/v1/tools/no-such-tool', { headers: toolsHeaders(a.key), ...opts })).status).toBe(404);
    expect((await call('/api/v1/health', { headers: toolsHeaders(a.key), ...opts })).status).toBe(200);
    expect((await call('/api/v1/categories', { headers: toolsHeaders(b.key), ...opts })).status).toBe(200);
    expect((await compressCall(a.key, { image: PNG, format: 'png' }, opts)).status).toBe(200);
    expect((await compressCall(a.key, { image: PNG, quality: '0' }, opts)).status).toBe(400);

    clock.advance(DAY);
    expect((await call('/api/v1/tools?limit=1', { headers: toolsHeaders(a.key), ...opts })).status).toBe(200);
    expect((await compressCall(a.key, { image: PNG }, opts)).status).toBe(200);
    expect((await compressCall(a.key, { image: PNG }, opts)).status).toBe(200);

    const report = await usage(browser);
    expect(report.days).toHaveLength(30);
    expect(report.days.at(-1)).toBe('2026-11-21');
    expect(report.days[0]).toBe('2026-10-23');
    expect(report.account.requests.slice(-2)).toEqual([3, 1]);
    expect(report.account.compressions.slice(-2)).toEqual([1, 2]);
    expect(report.account.requests.slice(0, -2).every((n) => n === 0)).toBe(true);
    const ka = report.keys.find((k) => k.id === a.id)!;
    const kb = report.keys.find((k) => k.id === b.id)!;
    expect([ka.requests.slice(-2), ka.compressions.slice(-2)]).toEqual([
      [2, 1],
      [1, 2],
    ]);
    expect([kb.requests.slice(-2), kb.compressions.slice(-2)]).toEqual([
      [1, 0],
      [0, 0],
    ]);
    expect(ka.windows.day).toMatchObject({ limit: 1000, used: 1, remaining: 999 });
    expect(ka.windows.month_compressions).toMatchObject({ limit: 100, used: 3 });
    // Units lent to the API key's location and not yet spent count as taken: never more left than is.
    expect(ka.windows.month_compressions!.remaining).toBeLessThanOrEqual(97);
    expect(ka.windows.month_compressions!.remaining).toBeGreaterThanOrEqual(93);

    // 29 days on (signed in again: sessions idle out after 7 days), the first day has left the view.
    clock.advance(29 * DAY);
    const again = new Browser(clock);
    const signin = await again.page('/signin');
    expect((await again.post('/signin', { _csrf: signin.csrf, email, password: PASSWORD })).status).toBe(303);
    const later = await usage(again);
    expect(later.account.requests.slice(0, 2)).toEqual([1, 0]);
    expect(later.account.requests.reduce((x, y) => x + y)).toBe(1);
  });

  it('does not count 429 answers', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 9, 30, 1));
    const { browser, csrf } = await signedUp({ clock });
    const k = await newKey(browser, csrf, ['tools']);
    const statuses: number[] = [];
    for (let i = 0; i < 103; i++)
      statuses.push((await call('/api/v1/categories', { headers: toolsHeaders(k.key), clock })).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect((await usage(browser)).account.requests.at(-1)).toBe(100);
  });

  it('keeps a revoked key in the history and marks it', async () => {
    const { browser, csrf } = await signedUp();
    const k = await newKey(browser, csrf, ['tools']);
    await call('/api/v1/categories', { headers: toolsHeaders(k.key) });
    await browser.json(`/api/v1/keys/${k.id}`, { method: 'DELETE', csrf });
    const report = await usage(browser);
    const key = report.keys.find((x) => x.id === k.id)!;
    expect(key.revoked_at).not.toBeNull();
    expect(key.requests.at(-1)).toBe(1);
    expect(report.account.requests.at(-1)).toBe(1);
  });

  it('shows the totals, the chart and each key on the usage page', async () => {
    const { browser, csrf } = await signedUp();
    const k = await newKey(browser, csrf);
    const before = await browser.page('/');
    expect(before.html).toMatch(/data-testid="total-requests">0</);
    await call('/api/v1/categories', { headers: toolsHeaders(k.key) });
    await call('/api/v1/categories', { headers: toolsHeaders(k.key) });
    expect((await compressCall(k.key, { image: PNG })).status).toBe(200);
    const after = await browser.page('/');
    expect(after.html).toMatch(/data-testid="total-requests">2</);
    expect(after.html).toMatch(/data-testid="total-compressions">1</);
    expect(after.html).toMatch(/<svg[^>]*role="img"/);
    expect(after.html).toContain('Compressions this month');
    expect(after.html).toMatch(/<progress max="100" value="1"/);
    expect(after.html).toMatch(/<progress max="1000" value="2"/);
  });

  it('needs a session', async () => {
    expect((await new Browser().json('/api/v1/usage')).status).toBe(401);
  });
});

describe('Try it: POST /api/v1/console/compress', () => {
  it('takes the transformations the page sends, and answers the crop box it outlines', async () => {
    const { browser, csrf } = await signedUp();
    const parts = { image: jpegOf(photo(320, 240)), fit: 'cover', width: '60', height: '60', gravity: 'right' };
    const res = await consoleCompress(browser, csrf, parts);
    expect(res.status).toBe(200);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['60', '60']);
    // The right-hand square of the 320×240 original, in its pixels.
    expect(res.headers.get('x-crop-box')).toBe('80,0,240,240');
    expect(res.headers.get('x-gravity')).toBe('right');
    const turned = await consoleCompress(browser, csrf, { image: jpegOf(photo(32, 24)), rotate: '90', flip: 'h' });
    expect([turned.headers.get('x-image-width'), turned.headers.get('x-image-height')]).toEqual(['24', '32']);
    expect(turned.headers.get('x-crop-box')).toBeNull();
  });

  it("compresses for the signed-in account on its own console meter, with the account's tier rules", async () => {
    const { browser, csrf } = await signedUp();
    const res = await consoleCompress(browser, csrf, { image: jpegOf(photo(320, 240)), quality: '50', width: '160' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('x-image-width')).toBe('160');
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('99');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="try.jpg"');
    expect([...(await bodyBytes(res)).slice(0, 3)]).toEqual([0xff, 0xd8, 0xff]);

    const webp = await consoleCompress(browser, csrf, { image: PNG, format: 'webp' });
    expect(webp.status).toBe(403);
    expect(((await webp.json()) as { error: { code: string } }).error.code).toBe('plan_upgrade_required');

    const report = await usage(browser);
    const meter = report.keys.find((k) => k.kind === 'console')!;
    expect(meter.compressions.at(-1)).toBe(1);
    expect(meter.windows.month_compressions).toMatchObject({ used: 1, remaining: 99 });
    expect(report.account.compressions.at(-1)).toBe(1);
    // The console meter is not an API key: it is not listed and cannot be revoked.
    const keys = (await (await browser.json('/api/v1/keys')).json()) as { data: unknown[] };
    expect(keys.data).toEqual([]);
    expect((await browser.json(`/api/v1/keys/${meter.id}`, { method: 'DELETE', csrf })).status).toBe(404);
    // The figure never says more than is left (units held near the keys count as taken): "at least", so it
    // cannot contradict Usage's count of what was used.
    expect((await browser.page('/try')).html).toMatch(/at least <strong id="try-remaining">99</);
  });

  it("needs a session and the CSRF token; bad uploads get the API's errors and cost nothing", async () => {
    const { browser, csrf } = await signedUp();
    expect((await consoleCompress(new Browser(), csrf, { image: PNG })).status).toBe(401);
    const noToken = await consoleCompress(browser, undefined, { image: PNG });
    expect(noToken.status).toBe(403);
    const bad = await consoleCompress(browser, csrf, { image: new TextEncoder().encode('not an image') });
    expect(bad.status).toBe(415);
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('100');
  });
});
