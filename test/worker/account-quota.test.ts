// Image API's monthly quota belongs to the account: all its keys, and the console's
// "Try it", draw on one month counted exactly by the account's Durable Object, so more keys or revoked
// and re-made keys never add compressions. Key creation is capped per account per day.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Statement } from '../../src/db/statements.ts';
import { accountStatement, keyStatement } from '../../src/accounts/provision.ts';
import { hashKey } from '../../src/accounts/keys.ts';
import { MAX_KEYS_CREATED_PER_DAY } from '../../src/keys/limits.ts';
import { MAX_ACTIVE_KEYS } from '../../src/keys/limits.ts';
import { RESERVATION_TTL_MS } from '../../src/metering/counters.ts';
import { call, revoke, TestClock, toolsHeaders, type TestKey } from './helpers.ts';
import { type Browser, signedUp } from './console-helpers.ts';
import { compressCall, form, photo, pngOf } from './image-fixtures.ts';

const TINY = pngOf(photo(8, 8));
const START = Date.UTC(2026, 10, 21, 12, 0, 5, 250);
const DEC_1 = Date.UTC(2026, 11, 1);
const NOV_22 = Date.UTC(2026, 10, 22);
const RETRY_TO_DEC_1 = String(Math.ceil((DEC_1 - START) / 1000));
// Memory for every request at once (130 small PNGs to JPEG, each counting the request's base and its engine), so each one reaches the meter: these tests are about the month alone.
const ROOMY = { MEMORY_BUDGET_MB: '4000' };

const run = (s: Statement) =>
  env.DB.prepare(s.sql)
    .bind(...s.params)
    .run();
const remaining = (res: Response): string | null => res.headers.get('x-ratelimit-remaining');

/** One account (free image tier unless told) with `n` keys, made as the operator CLI makes them. */
async function accountWithKeys(n: number, image: 'free' | 'pro' = 'free'): Promise<TestKey[]> {
  const account = accountStatement(
    { email: `acct-${crypto.randomUUID()}@example.com`, name: 'Many keys', imageTier: image, toolsTier: 'free' },
    Date.now(),
  );
  await run(account.statement);
  const keys: TestKey[] = [];
  for (let i = 0; i < n; i++) {
    const key = await keyStatement(
      { accountId: account.record.id, scopes: ['image', 'tools'], name: `k${i}` },
      Date.now(),
    );
    await run(key.statement);
    keys.push({ key: key.record.key, id: key.record.id, accountId: account.record.id });
  }
  return keys;
}

async function meterOf(k: TestKey | { key: string }) {
  const hash = await hashKey(k.key);
  return { hash, stub: env.METER.get(env.METER.idFromName(hash)) };
}

/** Spends `n` units of the account's month through key `k`'s meter, as n answered compressions would. */
async function spend(k: TestKey | { key: string }, n: number, now: number): Promise<void> {
  const { hash, stub } = await meterOf(k);
  for (let i = 0; i < n; i++) {
    const r = await stub.reserve(hash, now);
    expect(r.outcome).toBe('ok');
    await stub.commit(hash, r.reservation!, now);
  }
}

async function errorOf(res: Response): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  return ((await res.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
}

// Each test compresses through several keys, some with 130 requests at once: 30 s, not 5, so a busy machine
// does not fail them (a hang still does).
describe('the month belongs to the account', { timeout: 30_000 }, () => {
  it('20 keys of one free account give exactly 100 compressions in total: 130 concurrent requests over the 20 keys, 100 × 200', async () => {
    const keys = await accountWithKeys(20);
    const clock = new TestClock(START);
    const results = await Promise.all(
      Array.from({ length: 130 }, (_, i) => compressCall(keys[i % 20]!.key, { image: TINY }, { clock, env: ROOMY })),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(100);
    expect(refused).toHaveLength(30);
    // Each key's holder proves what is left from its slice of the month, never more than the 99 … 0 the
    // units had left when handed out: the last unit's answer says 0.
    const figures = ok.map((r) => Number(remaining(r)));
    expect(Math.max(...figures)).toBeLessThanOrEqual(99);
    expect(Math.min(...figures)).toBe(0);
    for (const r of ok) expect(r.headers.get('x-ratelimit-limit')).toBe('100');
    for (const r of refused) {
      const error = await errorOf(r);
      expect(error.code).toBe('quota_exceeded');
      expect(error.message).toMatch(/this account has used all 100 compressions/);
      expect(remaining(r)).toBe('0');
      expect(r.headers.get('x-ratelimit-reset')).toBe(String(DEC_1 / 1000));
      expect(r.headers.get('retry-after')).toBe(RETRY_TO_DEC_1);
    }
    await Promise.all(ok.map((r) => r.arrayBuffer()));

    // Every key now sees the account's exhausted month, on Image API and in /account.
    for (const k of keys) expect((await compressCall(k.key, { image: TINY }, { clock })).status).toBe(429);
    const account = await call('/api/v1/account', { headers: toolsHeaders(keys[7]!.key), clock });
    const usage = ((await account.json()) as { data: { usage: { month_compressions: unknown } } }).data.usage;
    expect(usage.month_compressions).toEqual({ limit: 100, used: 100, remaining: 0, reset: DEC_1 / 1000 });

    // Each key's per-day history holds its own share, and the shares add up to the account's 100.
    const today = Date.UTC(2026, 10, 21);
    let total = 0;
    for (const k of keys) {
      const { hash, stub } = await meterOf(k);
      total += (await stub.snapshot(hash, clock.now, today))!.history.find((d) => d.day === today)?.compressions ?? 0;
    }
    expect(total).toBe(100);

    // December is a fresh month for the account, on any key.
    clock.now = DEC_1;
    const december = await compressCall(keys[19]!.key, { image: TINY }, { clock });
    expect(december.status).toBe(200);
    expect(remaining(december)).toBe('99');
  });

  it('pro accounts share 10,000 the same way', async () => {
    const [a, b] = await accountWithKeys(2, 'pro');
    await spend(a!, 3, START);
    const res = await compressCall(b!.key, { image: TINY }, { clock: new TestClock(START) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(remaining(res)).toBe('9996');
  });

  it('revoking an exhausted key and making a new one gives no fresh quota (operator CLI)', async () => {
    const [old] = await accountWithKeys(1);
    await spend(old!, 100, START);
    await revoke(old!);
    const made = await keyStatement({ accountId: old!.accountId, scopes: ['image'], name: 'fresh' }, Date.now());
    await run(made.statement);
    const res = await compressCall(made.record.key, { image: TINY }, { clock: new TestClock(START) });
    expect(res.status).toBe(429);
    expect((await errorOf(res)).code).toBe('quota_exceeded');
    expect(remaining(res)).toBe('0');
  });

  it('revoking an exhausted key and making a new one in the console gives no fresh quota, nor does "Try it"', async () => {
    const clock = new TestClock(START);
    const { browser, csrf } = await signedUp({ clock });
    const create = async () =>
      (
        (await (
          await browser.json('/api/v1/keys', { method: 'POST', csrf, body: { name: 'CI', scopes: ['image', 'tools'] } })
        ).json()) as {
          data: { id: string; key: string };
        }
      ).data;
    const first = await create();
    await spend(first, 100, START);
    expect((await compressCall(first.key, { image: TINY }, { clock })).status).toBe(429);
    expect((await browser.json(`/api/v1/keys/${first.id}`, { method: 'DELETE', csrf })).status).toBe(200);

    const second = await create();
    const res = await compressCall(second.key, { image: TINY }, { clock });
    expect(res.status).toBe(429);
    expect(remaining(res)).toBe('0');
    expect(res.headers.get('retry-after')).toBe(RETRY_TO_DEC_1);

    const tryIt = await browser.fetch('/api/v1/console/compress', {
      method: 'POST',
      headers: { origin: 'https://api.shrinkray.test', 'x-csrf-token': csrf },
      body: form({ filename: 'try.png', image: TINY }),
    });
    expect(tryIt.status).toBe(429);
    expect((await errorOf(tryIt)).code).toBe('quota_exceeded');
    expect((await browser.page('/try')).html).toMatch(/id="try-remaining">0</);

    // The usage view shows the account's month once, and each key's share of it.
    const report = (
      (await (await browser.json('/api/v1/usage')).json()) as {
        data: {
          month_compressions: unknown;
          keys: { id: string; month_compressions: number; windows: { month_compressions: unknown } }[];
        };
      }
    ).data;
    expect(report.month_compressions).toEqual({ limit: 100, used: 100, remaining: 0, reset: DEC_1 / 1000 });
    expect(report.keys.find((k) => k.id === first.id)).toMatchObject({
      month_compressions: 100,
      windows: { month_compressions: report.month_compressions },
    });
    expect(report.keys.find((k) => k.id === second.id)).toMatchObject({
      month_compressions: 0,
      windows: { month_compressions: report.month_compressions },
    });
    const page = await browser.page('/');
    expect(page.html).toMatch(/<progress max="100" value="100" aria-label="Compressions this month, all keys/);
    expect(page.html).toContain(`data-testid="key-month-${first.id}">100<`);
  });

  it('a failure on one key gives the unit back to the account, for every key', async () => {
    const [a, b] = await accountWithKeys(2);
    const clock = new TestClock(START);
    await spend(a!, 99, START);
    // Failures on b (400, 415, 422), one at a time and then all at once, each answered with the unit back.
    const failures = [
      () => compressCall(b!.key, { image: TINY, quality: '0' }, { clock }),
      () => compressCall(b!.key, { image: new TextEncoder().encode('BM............') }, { clock }),
      () => compressCall(b!.key, { image: TINY.subarray(0, Math.floor(TINY.length * 0.6)) }, { clock }),
    ];
    for (const send of failures) {
      const res = await send();
      expect([400, 415, 422]).toContain(res.status);
      expect(remaining(res)).toBe('1');
    }
    // At once, on both keys, they contend for the one unit: each either held it and failed (giving it
    // back) or found it held (429); none spends it.
    const together = await Promise.all([...failures, ...failures, ...failures].map((send) => send()));
    expect(together.every((r) => [400, 415, 422, 429].includes(r.status))).toBe(true);
    expect(together.some((r) => r.status !== 429)).toBe(true);
    const last = await compressCall(a!.key, { image: TINY }, { clock });
    expect(last.status).toBe(200);
    expect(remaining(last)).toBe('0');
    expect((await compressCall(b!.key, { image: TINY }, { clock })).status).toBe(429);
  });

  it('a unit reserved through one key is held for all, released to all, and expires after the reservation TTL', async () => {
    const [a, b] = await accountWithKeys(2);
    const ma = await meterOf(a!);
    const mb = await meterOf(b!);
    await spend(a!, 99, START);
    const held = await ma.stub.reserve(ma.hash, START);
    expect(held.outcome).toBe('ok');
    expect((await mb.stub.imageStatus(mb.hash, START)).rate!.remaining).toBe(0);
    expect((await mb.stub.reserve(mb.hash, START)).outcome).toBe('quota_exceeded');
    await ma.stub.release(ma.hash, held.reservation!, START);
    expect((await mb.stub.imageStatus(mb.hash, START)).rate!.remaining).toBe(1);

    // An abandoned reservation (its request died) frees the account's unit after RESERVATION_TTL_MS.
    const abandoned = await mb.stub.reserve(mb.hash, START);
    expect(abandoned.outcome).toBe('ok');
    expect((await ma.stub.reserve(ma.hash, START + RESERVATION_TTL_MS - 1)).outcome).toBe('quota_exceeded');
    const later = await ma.stub.reserve(ma.hash, START + RESERVATION_TTL_MS);
    expect(later.outcome).toBe('ok');
    await ma.stub.commit(ma.hash, later.reservation!, START + RESERVATION_TTL_MS);
    // The late commit of the expired reservation cannot overdraw the full month.
    const late = await mb.stub.commit(mb.hash, abandoned.reservation!, START + RESERVATION_TTL_MS + 1);
    expect(late.rate).toMatchObject({ limit: 100, remaining: 0 });
    const usage = (await ma.stub.tools(ma.hash, START + RESERVATION_TTL_MS + 1, false, true)).usage!;
    expect(usage.month_compressions.used).toBe(100);
  });

  it("/api/v1/account shows the account's month to every key", async () => {
    const [a, b] = await accountWithKeys(2);
    const clock = new TestClock(START);
    expect((await compressCall(a!.key, { image: TINY }, { clock })).status).toBe(200);
    expect((await compressCall(a!.key, { image: TINY }, { clock })).status).toBe(200);
    expect((await compressCall(b!.key, { image: TINY }, { clock })).status).toBe(200);
    for (const k of [a!, b!]) {
      const res = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
      const body = (await res.json()) as { data: { usage: { month_compressions: unknown; day: { used: number } } } };
      // Units lent to the keys' locations and not yet spent count as taken: never more left than is.
      const month = body.data.usage.month_compressions as { remaining: number };
      expect(month).toMatchObject({ limit: 100, used: 3, reset: DEC_1 / 1000 });
      expect(month.remaining).toBeLessThanOrEqual(97);
      expect(month.remaining).toBeGreaterThanOrEqual(90);
    }
  });
});

describe('key creation per account per day', () => {
  async function createVia(browser: Browser, csrf: string, name: string) {
    const res = await browser.json('/api/v1/keys', { method: 'POST', csrf, body: { name, scopes: ['image'] } });
    const body = (await res.json()) as {
      data?: { id: string };
      error?: { code: string; message: string; details?: Record<string, unknown> };
    };
    return { res, body };
  }

  it(`is capped at ${MAX_KEYS_CREATED_PER_DAY} keys per UTC day, revoked keys included, exactly under concurrency`, async () => {
    expect(MAX_KEYS_CREATED_PER_DAY).toBeGreaterThan(MAX_ACTIVE_KEYS);
    const clock = new TestClock(START);
    const { browser, csrf } = await signedUp({ clock });
    // Ten made and revoked at once: they still count.
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => createVia(browser, csrf, `a${i}`)));
    expect(first.every((m) => m.res.status === 201)).toBe(true);
    for (const m of first)
      expect((await browser.json(`/api/v1/keys/${m.body.data!.id}`, { method: 'DELETE', csrf })).status).toBe(200);

    const rest = await Promise.all(Array.from({ length: 20 }, (_, i) => createVia(browser, csrf, `b${i}`)));
    expect(rest.filter((m) => m.res.status === 201)).toHaveLength(MAX_KEYS_CREATED_PER_DAY - 10);
    const refused = rest.filter((m) => m.res.status === 429);
    expect(refused).toHaveLength(20 - (MAX_KEYS_CREATED_PER_DAY - 10));
    const retryAfter = String(Math.ceil((NOV_22 - START) / 1000));
    for (const m of refused) {
      expect(m.body.error!.code).toBe('rate_limit_exceeded');
      expect(m.body.error!.message).toMatch(
        new RegExp(`at most ${MAX_KEYS_CREATED_PER_DAY} keys per day \\(UTC\\), revoked ones included`),
      );
      expect(m.body.error!.details).toEqual({ max: MAX_KEYS_CREATED_PER_DAY, reset: NOV_22 / 1000 });
      expect(m.res.headers.get('retry-after')).toBe(retryAfter);
    }
    const listed = ((await (await browser.json('/api/v1/keys')).json()) as { data: unknown[] }).data;
    expect(listed).toHaveLength(MAX_KEYS_CREATED_PER_DAY);

    // The keys page says so too, keeps the form filled, and makes nothing.
    const page = await browser.post('/keys', { _csrf: csrf, name: 'one more', scopes: ['image'] });
    expect(page.status).toBe(429);
    expect(page.headers.get('retry-after')).toBe(retryAfter);
    const html = await page.text();
    expect(html).toContain(`created ${MAX_KEYS_CREATED_PER_DAY} keys today`);
    expect(html).toContain('value="one more"');

    // At 00:00 UTC the day starts afresh (the session is still live: it idles out after 7 days).
    clock.now = NOV_22 - 1;
    expect((await createVia(browser, csrf, 'still today')).res.status).toBe(429);
    clock.now = NOV_22;
    expect((await createVia(browser, csrf, 'tomorrow')).res.status).toBe(201);
  });

  it(`still refuses a ${MAX_ACTIVE_KEYS + 1}st active key with 400 while the day has room`, async () => {
    const { browser, csrf } = await signedUp();
    const made = await Promise.all(
      Array.from({ length: MAX_ACTIVE_KEYS + 1 }, (_, i) => createVia(browser, csrf, `k${i}`)),
    );
    expect(made.filter((m) => m.res.status === 201)).toHaveLength(MAX_ACTIVE_KEYS);
    const refused = made.find((m) => m.res.status !== 201)!;
    expect(refused.res.status).toBe(400);
    expect(refused.body.error!.details).toEqual({ max: MAX_ACTIVE_KEYS });
  });
});
