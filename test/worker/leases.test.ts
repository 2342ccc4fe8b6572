// Tools API requests and the Image API's month spend leases held near the caller (docs/design.md,
// "Leases"): what a user sees must not change. A key changed or revoked binds on its next request at a
// location that holds a lease, /account counts the spends made from a slice, two locations together never
// pass a window's limit nor the month's quota, and a figure never says more is left than is.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import worker from '../../src/index.ts';
import { LEASE_GRACE_MS, LEASE_MAX_MS } from '../../src/metering/lease.ts';
import {
  TestClock,
  bearer,
  call,
  makeKey,
  revoke,
  setToolsTier,
  spendMonth,
  toolsHeaders,
  type TestKey,
} from './helpers.ts';
import { form, photo, pngOf } from './image-fixtures.ts';

const TINY = pngOf(photo(8, 8));

/** A request that came in at Cloudflare location `colo` (a Tools API GET unless `init` says otherwise). */
async function at(
  colo: string,
  k: TestKey,
  clock: TestClock,
  path = '/api/v1/categories',
  init: RequestInit = { headers: toolsHeaders(k.key) },
): Promise<Response> {
  const request = new Request(`https://api.shrinkray.test${path}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), 'cf-connecting-ip': '203.0.113.10' },
    cf: { colo },
  } as RequestInit);
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, NOW: () => clock.now } as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function spend(k: TestKey, clock: TestClock, n: number): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await call('/api/v1/categories', { headers: toolsHeaders(k.key), clock }));
  return out;
}

describe('leases near the caller', () => {
  it('a revoked key is refused on its next request where a lease is held', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    const before = await spend(k, clock, 5);
    expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await revoke(k);
    const after = await call('/api/v1/categories', { headers: toolsHeaders(k.key), clock });
    expect(after.status).toBe(401);
    expect((await after.json<any>()).error.message).toContain('revoked');
  });

  it('a tier change binds on the next request where a lease is held', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    const free = await spend(k, clock, 5);
    expect(free.at(-1)!.headers.get('x-ratelimit-limit')).toBe('100');
    await setToolsTier(k, 'developer');
    const next = (await spend(k, clock, 1))[0]!;
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(next.headers.get('x-ratelimit-remaining')).toBe('994');
  });

  it('/account counts every request spent from the slice', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    await spend(k, clock, 10);
    const account = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect(account.headers.get('x-ratelimit-remaining')).toBe('89');
    const usage = (await account.json<any>()).data.usage;
    expect(usage.minute).toMatchObject({ used: 11, remaining: 89 });
    expect(usage.day.used).toBe(11);
  });

  it('two locations at once admit exactly the minute', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    const responses = await Promise.all(
      Array.from({ length: 160 }, (_, i) => at(i % 2 === 0 ? 'AMS' : 'SIN', k, clock)),
    );
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(100);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(60);
    const remaining = ok.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(Math.max(...remaining)).toBeLessThanOrEqual(99);
    expect(Math.min(...remaining)).toBeGreaterThanOrEqual(0);
    // A refusal from either location answers with the minute's end.
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe('55');
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });

  it("a new location's requests count the units lent to another one", async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    // AMS keeps a slice of the minute, part of it unspent ...
    for (let i = 0; i < 40; i++) expect((await at('AMS', k, clock)).status).toBe(200);
    // ... while SIN, which has none, asks the key's object for 100 at once: it may have only the rest.
    const sin = await Promise.all(Array.from({ length: 100 }, () => at('SIN', k, clock)));
    const ams = await Promise.all(Array.from({ length: 100 }, () => at('AMS', k, clock)));
    const admitted = [...sin, ...ams].filter((r) => r.status === 200).length;
    expect(40 + admitted).toBe(100);
    await Promise.all([...sin, ...ams].map((r) => r.body?.cancel()));
  });

  it("a location's late report of the minute that ended leaves the new minute's count whole", async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 50));
    // AMS spends from a slice of this minute, the last spends not yet reported when the minute ends ...
    for (let i = 0; i < 30; i++) expect((await at('AMS', k, clock)).status).toBe(200);
    clock.advance(15_000);
    // ... SIN spends most of the next minute ...
    for (let i = 0; i < 90; i++) expect((await at('SIN', k, clock)).status).toBe(200);
    // ... and AMS's next request brings its report of the minute that ended: the new one still has 10 left.
    const next = await Promise.all(Array.from({ length: 40 }, (_, i) => at(i % 2 === 0 ? 'AMS' : 'SIN', k, clock)));
    expect(next.filter((r) => r.status === 200)).toHaveLength(10);
    await Promise.all(next.map((r) => r.body?.cancel()));
  });
});

/** A compression of an 8×8 PNG at `colo`; `quality` 0 makes it a 400 after its unit was reserved. */
const compressAt = (colo: string, k: TestKey, clock: TestClock, quality = '80') =>
  at(colo, k, clock, '/api/v1/compress', {
    method: 'POST',
    headers: bearer(k.key),
    body: form({ image: TINY, quality }),
  });

const left = (res: Response): number => Number(res.headers.get('x-ratelimit-remaining'));

describe('leases of the month near the caller', () => {
  it("a location's figure counts the slice of the month lent to another one as taken", async () => {
    const k = await makeKey({ scopes: ['image', 'tools'], image: 'free' });
    const clock = new TestClock();
    // AMS reserves from a slice of the month it holds, with units to spare ...
    for (let i = 0; i < 2; i++) expect((await compressAt('AMS', k, clock)).status).toBe(200);
    // ... so SIN, after its own, may prove fewer left than the 97 no compression holds: never more.
    const sin = await compressAt('SIN', k, clock);
    expect(sin.status).toBe(200);
    expect(left(sin)).toBeLessThan(97);
    expect(left(sin)).toBeGreaterThanOrEqual(90);
    const usage = (await (await call('/api/v1/account', { headers: toolsHeaders(k.key), clock })).json<any>()).data
      .usage.month_compressions;
    expect(usage.used).toBeLessThanOrEqual(3);
    expect(usage.remaining).toBeLessThan(97);
  });

  it('each compression at a location holding a slice shows what is left, and a failed one gives its unit back', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock();
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await compressAt('AMS', k, clock);
      expect(res.status).toBe(200);
      seen.push(left(res));
    }
    expect(seen).toEqual([99, 98, 97, 96, 95, 94]);
    const failed = await compressAt('AMS', k, clock, '0');
    expect(failed.status).toBe(400);
    expect(left(failed)).toBe(94);
    expect(left(await compressAt('AMS', k, clock))).toBe(93);
  });

  it('two locations at once answer exactly the last units of the month, and the month counts them', async () => {
    const k = await makeKey({ scopes: ['image', 'tools'], image: 'free' });
    const clock = new TestClock();
    await spendMonth(k, 90, clock.now);
    // Each location takes a slice of what is left during the burst, and proves no more than is left.
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => compressAt(i % 2 === 0 ? 'AMS' : 'SIN', k, clock)),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(20);
    for (const r of responses) if (r.status === 200) expect(left(r)).toBeLessThanOrEqual(9);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    expect((await compressAt('AMS', k, clock)).status).toBe(429);
    const usage = (await (await call('/api/v1/account', { headers: toolsHeaders(k.key), clock })).json<any>()).data
      .usage.month_compressions;
    expect(usage.remaining).toBe(0);
  }, 30_000);

  it("a compression reserved at the account's meter (signed image URLs) has the month's last units a slice held", async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock();
    // AMS holds a slice of the month with units to spare ...
    for (let i = 0; i < 3; i++) expect((await compressAt('AMS', k, clock)).status).toBe(200);
    // ... and the rest is reserved without a location, at the account's meter, to the last unit.
    const hash = await hashKey(k.key);
    const stub = env.METER.get(env.METER.idFromName(hash));
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      const reserved = await stub.reserve(hash, clock.now);
      if (reserved.outcome !== 'ok') break;
      await stub.commit(hash, reserved.reservation!, clock.now);
      admitted++;
    }
    expect(3 + admitted).toBe(100);
  }, 30_000);

  it('a revoked key is refused on its next compression where a slice of the month is held', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock();
    for (let i = 0; i < 3; i++) expect((await compressAt('AMS', k, clock)).status).toBe(200);
    await revoke(k);
    const after = await compressAt('AMS', k, clock);
    expect(after.status).toBe(401);
    expect((await after.json<any>()).error.message).toContain('revoked');
  });

  it("a revoked key's unspent slice of the month goes back to the account, not counted as compressions", async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock();
    for (let i = 0; i < 3; i++) expect((await compressAt('AMS', k, clock)).status).toBe(200);
    await revoke(k);
    // Past the lease's end at the account's meter, had its final report not arrived.
    await new Promise((r) => setTimeout(r, LEASE_MAX_MS + LEASE_GRACE_MS + 300));
    const month = await env.ACCOUNT_METER.get(env.ACCOUNT_METER.idFromName(k.accountId)).month('free', clock.now);
    expect(month).toMatchObject({ used: 3, remaining: 97 });
  }, 30_000);

  it('the minute of refused uploads, once full at one location, refuses compressions at another', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock();
    expect((await compressAt('SIN', k, clock)).status).toBe(200);
    const bmp = new TextEncoder().encode('BM............');
    for (let i = 0; i < 30; i++) {
      const res = await at('AMS', k, clock, '/api/v1/compress', {
        method: 'POST',
        headers: bearer(k.key),
        body: form({ image: bmp }),
      });
      expect(res.status).toBe(415);
    }
    const sin = await compressAt('SIN', k, clock);
    expect(sin.status).toBe(429);
    expect((await sin.json<any>()).error.code).toBe('rate_limit_exceeded');
  }, 30_000);
});
