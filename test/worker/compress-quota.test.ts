// POST /api/v1/compress metering: the free month (exact under concurrency), failures spending nothing, pro-only features.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { RESERVATION_TTL_MS } from '../../src/metering/counters.ts';
import { bearer, call, makeKey, spendMonth, TestClock } from './helpers.ts';
import { MULTIPART_BOUNDARY, MULTIPART_TYPE, compressCall, multipartBytes, photo, pngOf } from './image-fixtures.ts';

const TINY = pngOf(photo(8, 8));
const START = Date.UTC(2026, 10, 21, 12, 0, 5, 250); // mid-second, so Retry-After must round up
const DEC_1 = Date.UTC(2026, 11, 1);
const BOUNDARY = MULTIPART_BOUNDARY;

const free = () => makeKey({ scopes: ['image'], image: 'free' });
const pro = () => makeKey({ scopes: ['image'], image: 'pro' });
const remaining = (res: Response): string | null => res.headers.get('x-ratelimit-remaining');

async function expectError(res: Response, status: number, code: string): Promise<any> {
  expect(res.status).toBe(status);
  const { error } = await res.json<any>();
  expect(error.code).toBe(code);
  return error;
}

describe('the free month', () => {
  it('allows exactly 100 compressions, then 429 quota_exceeded until the 1st of next month (UTC)', async () => {
    const k = await free();
    const clock = new TestClock(START);
    for (let i = 0; i < 100; i++) {
      const res = await compressCall(k.key, { image: TINY }, { clock });
      expect(res.status).toBe(200);
      expect(remaining(res)).toBe(String(99 - i));
      await res.arrayBuffer();
    }
    const refused = await compressCall(k.key, { image: TINY }, { clock });
    const error = await expectError(refused, 429, 'quota_exceeded');
    expect(error.message).toMatch(/100 compressions/);
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil((DEC_1 - START) / 1000)));
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(remaining(refused)).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(DEC_1 / 1000));

    clock.advance(DEC_1 - 1 - START); // the last millisecond of November is still November
    expect((await compressCall(k.key, { image: TINY }, { clock })).status).toBe(429);
    clock.advance(1);
    const december = await compressCall(k.key, { image: TINY }, { clock });
    expect(december.status).toBe(200);
    expect(remaining(december)).toBe('99');
    // 100 compressions one after another: about 5 s on a loaded 2-core machine, over vitest's default limit.
  }, 30_000);

  it('20 concurrent requests with 5 units left: exactly 5 succeed and 15 get 429', async () => {
    const k = await free();
    const clock = new TestClock(START);
    await spendMonth(k, 95, START);
    // Memory for all at once, so every request reaches the meter: this test is about the month alone.
    const options = { clock, env: { MEMORY_BUDGET_MB: '1000' } };
    const results = await Promise.all(Array.from({ length: 20 }, () => compressCall(k.key, { image: TINY }, options)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(5);
    expect(refused).toHaveLength(15);
    expect(ok.map(remaining).sort()).toEqual(['0', '1', '2', '3', '4']);
    for (const r of refused) {
      expect((await r.json<any>()).error.code).toBe('quota_exceeded');
      expect(remaining(r)).toBe('0');
      expect(r.headers.get('retry-after')).toBe(String(Math.ceil((DEC_1 - START) / 1000)));
    }
    expect((await compressCall(k.key, { image: TINY }, options)).status).toBe(429);
  });

  it('failed requests (400, 413, 415, 422) spend nothing', async () => {
    const k = await free();
    const failures: [number, () => Promise<Response>][] = [
      [400, () => compressCall(k.key, { image: TINY, quality: '0' })],
      [400, () => compressCall(k.key, { image: TINY, colour: 'red' })],
      [415, () => compressCall(k.key, { image: new TextEncoder().encode('BM............') })],
      [422, () => compressCall(k.key, { image: TINY.subarray(0, Math.floor(TINY.length * 0.6)) })],
      [
        413,
        () =>
          call('/api/v1/compress', {
            method: 'POST',
            headers: {
              ...bearer(k.key),
              'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
              'Content-Length': String(11 * 1024 * 1024),
            },
            body: new ReadableStream({ pull: () => {} }, { highWaterMark: 0 }),
            duplex: 'half',
          } as RequestInit),
      ],
    ];
    for (const [status, send] of failures) {
      const res = await send();
      expect(res.status).toBe(status);
      expect(remaining(res)).toBe('100');
    }
    const ok = await compressCall(k.key, { image: TINY });
    expect(ok.status).toBe(200);
    expect(remaining(ok)).toBe('99');
  });
});

describe('pro-only features', () => {
  it('free keys get 403 plan_upgrade_required for webp and for target_kb, spending nothing', async () => {
    const k = await free();
    const webp = await compressCall(k.key, { image: TINY, format: 'webp' });
    const webpError = await expectError(webp, 403, 'plan_upgrade_required');
    expect(webpError.param).toBe('format');
    expect(webpError.message).toMatch(/pro/);
    expect(remaining(webp)).toBe('100');
    const target = await compressCall(k.key, { image: TINY, target_kb: '10' });
    const targetError = await expectError(target, 403, 'plan_upgrade_required');
    expect(targetError.param).toBe('target_kb');
    expect(remaining(target)).toBe('100');
    const ok = await compressCall(k.key, { image: TINY, format: 'png' });
    expect(ok.status).toBe(200);
    expect(remaining(ok)).toBe('99');
  });

  it('pro keys get webp output and target_kb', async () => {
    const k = await pro();
    const webp = await compressCall(k.key, { image: TINY, format: 'webp' });
    expect(webp.status).toBe(200);
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(webp.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(remaining(webp)).toBe('9999');
    const target = await compressCall(k.key, { image: pngOf(photo(64, 64)), target_kb: '2' });
    expect(target.status).toBe(200);
    expect(target.headers.get('x-target-reached')).toBe('true');
    expect((await target.arrayBuffer()).byteLength).toBeLessThanOrEqual(2048);
    expect(remaining(target)).toBe('9998');
  });
});

describe('a compression whose unit could not be charged', () => {
  it('gets 429 quota_exceeded, not the image, when its reservation expired and the month filled meanwhile', async () => {
    // With the tools scope, so that the meter's usage view counts the month's units.
    const k = await makeKey({ scopes: ['image', 'tools'], image: 'free' });
    await spendMonth(k, 99, START);
    const clock = new TestClock(START);
    // The body is held until the test says so: the route reserves before it reads, so the first pull
    // means this request's unit (the month's last) is reserved.
    let reading!: () => void;
    const reserved = new Promise<void>((resolve) => (reading = resolve));
    let send!: () => void;
    const gate = new Promise<void>((resolve) => (send = resolve));
    const bytes = multipartBytes([{ name: 'image', value: TINY, filename: 'tiny.png' }]);
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          reading();
          await gate;
          controller.enqueue(bytes);
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const answer = call('/api/v1/compress', {
      method: 'POST',
      headers: { ...bearer(k.key), 'Content-Type': MULTIPART_TYPE },
      body,
      duplex: 'half',
      clock,
    } as RequestInit & { clock: TestClock });
    await reserved;
    // The reservation outlives its RESERVATION_TTL_MS, and another request takes the unit it held.
    clock.advance(RESERVATION_TTL_MS + 1);
    const hash = await hashKey(k.key);
    const stub = env.METER.get(env.METER.idFromName(hash));
    const other = await stub.reserve(hash, clock.now);
    expect(other.outcome).toBe('ok');
    await stub.commit(hash, other.reservation!, clock.now);
    send();
    const res = await answer;
    const error = await expectError(res, 429, 'quota_exceeded');
    expect(error.message).toMatch(/100 compressions/);
    expect(remaining(res)).toBe('0');
    const usage = (await stub.tools(hash, clock.now, false, true)).usage!;
    expect(usage.month_compressions.used).toBe(100);
  });
});

describe('an upload slower than UPLOAD_READ_TIMEOUT_MS', () => {
  it('gets 408 request_timeout and spends nothing', async () => {
    const k = await free();
    const bytes = multipartBytes([{ name: 'image', value: TINY, filename: 'tiny.png' }]);
    // Half the body, then nothing more: a client trickling slower than the deadline.
    const stalled = () =>
      new ReadableStream<Uint8Array>(
        {
          start(controller) {
            controller.enqueue(bytes.subarray(0, bytes.length >> 1));
          },
        },
        { highWaterMark: 0 },
      );
    const started = Date.now();
    const res = await call('/api/v1/compress', {
      method: 'POST',
      headers: { ...bearer(k.key), 'Content-Type': MULTIPART_TYPE },
      body: stalled(),
      duplex: 'half',
      env: { UPLOAD_READ_TIMEOUT_MS: '300' },
    } as RequestInit & { env: Record<string, unknown> });
    expect(Date.now() - started).toBeLessThan(5000);
    const error = await expectError(res, 408, 'request_timeout');
    expect(error.message).toMatch(/0\.3 s/);
    expect(error.details).toEqual({ timeout_ms: 300 });
    expect(remaining(res)).toBe('100');
    const ok = await compressCall(k.key, { image: TINY });
    expect(ok.status).toBe(200);
    expect(remaining(ok)).toBe('99');
  });
});
