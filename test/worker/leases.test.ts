// Tools API requests spend a lease held near the caller (docs/design.md, "Leases"): what a user sees
// must not change. A key changed or revoked binds on its next request at a location that holds a lease,
// /account counts the spends made from a slice, and two locations together never pass a window's limit.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index.ts';
import { TestClock, call, makeKey, revoke, setToolsTier, toolsHeaders, type TestKey } from './helpers.ts';

/** A request that came in at Cloudflare location `colo`. */
async function at(colo: string, k: TestKey, clock: TestClock, path = '/api/v1/categories'): Promise<Response> {
  const request = new Request(`https://api.shrinkray.test${path}`, {
    headers: { ...toolsHeaders(k.key), 'cf-connecting-ip': '203.0.113.10' },
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
});
