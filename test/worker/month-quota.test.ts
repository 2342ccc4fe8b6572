// The Image API month: reserve before work, commit on 200, release on failure. Driven through the key's
// Durable Object, as the compress route will drive it.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { RESERVATION_TTL_MS } from '../../src/metering/counters.ts';
import { bearer, call, makeKey, TestClock, type TestKey } from './helpers.ts';

const NOV_21 = Date.UTC(2026, 10, 21, 9, 30, 0);
const DEC_1 = Date.UTC(2026, 11, 1);

async function meterOf(k: TestKey) {
  const hash = await hashKey(k.key);
  return { hash, stub: env.METER.get(env.METER.idFromName(hash)) };
}

describe('monthly compressions', () => {
  it('free keys get exactly 100 in a month, then quota_exceeded until the 1st', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const { hash, stub } = await meterOf(k);
    for (let i = 0; i < 100; i++) {
      const r = await stub.reserve(hash, NOV_21);
      expect(r.outcome).toBe('ok');
      const c = await stub.commit(hash, r.reservation!, NOV_21);
      expect(c.rate!.remaining).toBe(99 - i);
    }
    const refused = await stub.reserve(hash, NOV_21);
    expect(refused.outcome).toBe('quota_exceeded');
    expect(refused.rate).toMatchObject({
      limit: 100,
      remaining: 0,
      reset: DEC_1 / 1000,
      retryAfter: (DEC_1 - NOV_21) / 1000,
    });

    // The compress endpoint reports the same month on its headers.
    const res = await call('/api/v1/compress', {
      method: 'POST',
      headers: bearer(k.key),
      clock: new TestClock(NOV_21),
    });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(DEC_1 / 1000));

    expect((await stub.reserve(hash, DEC_1)).outcome).toBe('ok');
  });

  it('pro keys get 10,000', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    const { hash, stub } = await meterOf(k);
    expect((await stub.imageStatus(hash, NOV_21)).rate).toMatchObject({ limit: 10_000, remaining: 10_000 });
  });

  it('concurrent reservations never overdraw: 20 at once with 5 left give exactly 5', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const { hash, stub } = await meterOf(k);
    for (let i = 0; i < 95; i++) await stub.commit(hash, (await stub.reserve(hash, NOV_21)).reservation!, NOV_21);
    const results = await Promise.all(Array.from({ length: 20 }, () => stub.reserve(hash, NOV_21)));
    const granted = results.filter((r) => r.outcome === 'ok');
    expect(granted).toHaveLength(5);
    expect(results.filter((r) => r.outcome === 'quota_exceeded')).toHaveLength(15);
    await Promise.all(granted.map((r) => stub.commit(hash, r.reservation!, NOV_21)));
    expect((await stub.imageStatus(hash, NOV_21)).rate!.remaining).toBe(0);
  });

  it('a released reservation gives its unit back; the month is never charged for failures', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const { hash, stub } = await meterOf(k);
    const held = await Promise.all(Array.from({ length: 100 }, () => stub.reserve(hash, NOV_21)));
    expect(held.every((r) => r.outcome === 'ok')).toBe(true);
    expect((await stub.reserve(hash, NOV_21)).outcome).toBe('quota_exceeded');
    for (const r of held.slice(0, 40)) await stub.release(hash, r.reservation!, NOV_21);
    expect((await stub.imageStatus(hash, NOV_21)).rate!.remaining).toBe(40);
    for (const r of held.slice(40)) await stub.commit(hash, r.reservation!, NOV_21);
    const status = await stub.imageStatus(hash, NOV_21);
    expect(status.rate!.remaining).toBe(40);
    // Settling twice is harmless: a released or committed reservation cannot be committed again.
    await stub.commit(hash, held[0]!.reservation!, NOV_21);
    expect((await stub.imageStatus(hash, NOV_21)).rate!.remaining).toBe(39);
  });

  it('abandoned reservations expire and free their unit', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const { hash, stub } = await meterOf(k);
    await Promise.all(Array.from({ length: 100 }, () => stub.reserve(hash, NOV_21)));
    expect((await stub.reserve(hash, NOV_21 + RESERVATION_TTL_MS - 1)).outcome).toBe('quota_exceeded');
    expect((await stub.reserve(hash, NOV_21 + RESERVATION_TTL_MS)).outcome).toBe('ok');
  });

  it('a late commit of an expired reservation never overdraws a full month', async () => {
    const k = await makeKey({ scopes: ['image', 'tools'] });
    const { hash, stub } = await meterOf(k);
    const stale = await stub.reserve(hash, NOV_21);
    const later = NOV_21 + RESERVATION_TTL_MS + 1;
    const fresh = await Promise.all(Array.from({ length: 100 }, () => stub.reserve(hash, later)));
    for (const r of fresh) await stub.commit(hash, r.reservation!, later);
    const after = await stub.commit(hash, stale.reservation!, later);
    expect(after.rate).toMatchObject({ remaining: 0 });
    const used = (await stub.tools(hash, later, false, true)).usage!.month_compressions.used;
    expect(used).toBe(100);
  });

  it('a reservation made in one month is charged to that month', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const { hash, stub } = await meterOf(k);
    const lastSecond = DEC_1 - 1000;
    const r = await stub.reserve(hash, lastSecond);
    await stub.commit(hash, r.reservation!, DEC_1 + 500);
    expect((await stub.imageStatus(hash, DEC_1 + 500)).rate!.remaining).toBe(100);
    expect((await stub.imageStatus(hash, lastSecond)).rate!.remaining).toBe(99);
  });

  it('a tools-only key cannot reserve', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const { hash, stub } = await meterOf(k);
    expect((await stub.reserve(hash, NOV_21)).outcome).toBe('forbidden');
  });
});
