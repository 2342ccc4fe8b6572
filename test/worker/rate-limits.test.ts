import { SELF, env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import type { KeyMeter } from '../../src/metering/key-meter.ts';
import { awayFromMinuteEdge, TestClock, call, makeKey, toolsHeaders, type TestKey } from './helpers.ts';

const MINUTE = 60_000;

async function spend(k: TestKey, clock: TestClock, n: number): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await call('/api/v1/account', { headers: toolsHeaders(k.key), clock }));
  return out;
}

async function meterOf(k: TestKey) {
  const hash = await hashKey(k.key);
  return { hash, stub: env.METER.get(env.METER.idFromName(hash)) };
}

type Meter = Awaited<ReturnType<typeof meterOf>>;

/**
 * Puts the key's windows where hundreds of requests would have left them, in one write instead of as
 * many calls (the calls themselves are what the minute tests above make through the API).
 */
async function preset(
  { hash, stub }: Meter,
  now: number,
  windows: { name: 'minute' | 'day'; start: number; used: number }[],
): Promise<void> {
  await stub.tools(hash, now, false); // first use creates the meter's tables
  await runInDurableObject(stub, (_: KeyMeter, state) => {
    for (const w of windows)
      state.storage.sql.exec(
        'INSERT OR REPLACE INTO windows (name, start, used) VALUES (?, ?, ?)',
        w.name,
        w.start,
        w.used,
      );
  });
}

describe('Tools API minute window', () => {
  it('the 101st free request in a minute is 429 with Retry-After and exact headers', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 15)); // 45 s before the minute ends
    const ok = await spend(k, clock, 100);
    expect(ok.every((r) => r.status === 200)).toBe(true);
    expect(ok[0]!.headers.get('x-ratelimit-remaining')).toBe('99');
    expect(ok[99]!.headers.get('x-ratelimit-remaining')).toBe('0');
    const minuteEnd = String(Date.UTC(2026, 10, 21, 12, 1, 0) / 1000);
    expect(ok[99]!.headers.get('x-ratelimit-reset')).toBe(minuteEnd);

    const refused = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect(refused.status).toBe(429);
    expect((await refused.json<any>()).error.code).toBe('rate_limit_exceeded');
    expect(refused.headers.get('retry-after')).toBe('45');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(minuteEnd);
  });

  it('resets at the next UTC minute, not 60 s after the first request', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 59, 500));
    await spend(k, clock, 100);
    expect((await spend(k, clock, 1))[0]!.status).toBe(429);
    clock.advance(500); // 12:01:00.000
    const fresh = (await spend(k, clock, 1))[0]!;
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('developer keys get 1,000 per minute', async () => {
    const k = await makeKey({ scopes: ['tools'], tools: 'developer' });
    const now = Date.UTC(2026, 10, 21, 12, 0, 1);
    await preset(await meterOf(k), now, [
      { name: 'minute', start: Date.UTC(2026, 10, 21, 12, 0), used: 999 },
      { name: 'day', start: Date.UTC(2026, 10, 21), used: 999 },
    ]);
    const last = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock: new TestClock(now) });
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await call('/api/v1/account', { headers: toolsHeaders(k.key), clock: new TestClock(now) })).status).toBe(
      429,
    );
  });

  it('a 429 is not counted: the minute after a refusal starts fresh', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    await spend(k, clock, 100);
    for (let i = 0; i < 5; i++) expect((await spend(k, clock, 1))[0]!.status).toBe(429);
    clock.advance(MINUTE);
    const res = (await spend(k, clock, 1))[0]!;
    expect(res.status).toBe(200);
    const usage = (await res.json<any>()).data.usage;
    expect(usage.day.used).toBe(101);
  });
});

describe('Tools API day window', () => {
  it('the 1,001st free request of a UTC day is 429 until midnight, and spends no minute unit', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const meter = await meterOf(k);
    const { hash, stub } = meter;
    const start = Date.UTC(2026, 10, 21, 23, 45, 0);
    // A full day: ten minutes of 100, the last at 23:54.
    await preset(meter, start, [
      { name: 'minute', start: start + 9 * MINUTE, used: 100 },
      { name: 'day', start: Date.UTC(2026, 10, 21), used: 1000 },
    ]);
    const clock = new TestClock(start + 10 * MINUTE + 30_000); // 23:55:30, a fresh minute
    const refused = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect(refused.status).toBe(429);
    const midnight = Date.UTC(2026, 10, 22, 0, 0, 0);
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(midnight / 1000));
    expect(refused.headers.get('retry-after')).toBe(String((midnight - clock.now) / 1000));

    // The refusal spent nothing: the minute still has all 100 units.
    const usage = (await stub.tools(hash, clock.now, false, true)).usage!;
    expect(usage.minute.used).toBe(0);
    expect(usage.day.used).toBe(1000);

    clock.now = midnight;
    const nextDay = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect(nextDay.status).toBe(200);
    expect((await nextDay.json<any>()).data.usage.day).toMatchObject({ used: 1, remaining: 999, limit: 1000 });
  });

  it('X-RateLimit-Remaining reports the day when it is the smaller', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const start = Date.UTC(2026, 10, 21, 8, 0, 0);
    // 950 today: nine full minutes, then 50 in the tenth.
    await preset(await meterOf(k), start, [
      { name: 'minute', start: start + 9 * MINUTE, used: 50 },
      { name: 'day', start: Date.UTC(2026, 10, 21), used: 950 },
    ]);
    const res = await call('/api/v1/account', {
      headers: toolsHeaders(k.key),
      clock: new TestClock(start + 10 * MINUTE),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 22) / 1000));
  });

  it('enterprise has no daily cap', async () => {
    const k = await makeKey({ scopes: ['tools'], tools: 'enterprise' });
    const { hash, stub } = await meterOf(k);
    const now = Date.UTC(2026, 10, 21, 18, 0, 0);
    await stub.tools(hash, now, false); // first use creates the meter's tables
    // Ten million requests already today: far past any daily cap.
    await runInDurableObject(stub, (_: KeyMeter, state) => {
      state.storage.sql.exec(
        'INSERT INTO windows (name, start, used) VALUES (?, ?, ?)',
        'day',
        Date.UTC(2026, 10, 21),
        10_000_000,
      );
    });
    const res = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock: new TestClock(now) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9999');
    const day = (await res.json<any>()).data.usage.day;
    expect(day).toMatchObject({ limit: null, remaining: null, used: 10_000_001 });
  });

  it('enterprise minute limit is 10,000', async () => {
    const k = await makeKey({ scopes: ['tools'], tools: 'enterprise' });
    const { hash, stub } = await meterOf(k);
    const now = Date.UTC(2026, 10, 21, 18, 0, 0);
    await stub.tools(hash, now, false);
    await runInDurableObject(stub, (_: KeyMeter, state) => {
      state.storage.sql.exec('INSERT INTO windows (name, start, used) VALUES (?, ?, ?)', 'minute', now, 9_999);
    });
    expect((await stub.tools(hash, now, true)).outcome).toBe('ok');
    const refused = await stub.tools(hash, now, true);
    expect(refused.outcome).toBe('rate_limit_exceeded');
    expect(refused.rate).toMatchObject({ limit: 10_000, remaining: 0, retryAfter: 60 });
  });
});

describe('health', () => {
  it('is never counted, yet carries the rate headers', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    await spend(k, clock, 3);
    for (let i = 0; i < 20; i++) {
      const res = await call('/api/v1/health', { headers: toolsHeaders(k.key), clock });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('97');
    }
    const account = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect((await account.json<any>()).data.usage.minute.used).toBe(4);
  });

  it('still answers when the window is exhausted', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const clock = new TestClock();
    await spend(k, clock, 101);
    const res = await call('/api/v1/health', { headers: toolsHeaders(k.key), clock });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});

describe('concurrency', () => {
  it('a burst of 150 concurrent requests on a free key yields exactly 100 × 200 and 50 × 429', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    // If the burst straddles a minute boundary the split could differ; start well inside a minute.
    await awayFromMinuteEdge();
    const responses = await Promise.all(
      Array.from({ length: 150 }, () =>
        SELF.fetch('https://api.shrinkray.test/api/v1/account', { headers: toolsHeaders(k.key) }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(new Set(remaining).size).toBe(100); // every success saw a distinct count: no double spend
    await Promise.all(responses.map((r) => r.body?.cancel()));
  }, 15_000);
});
