// Retries and typed errors, against a scripted local server standing in for the service: the real one
// cannot be made to answer 503 overloaded or quota_exceeded on demand within a test's time. Each case
// counts the requests that arrived and the time between them.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  InvalidRequestError,
  OverloadedError,
  QuotaExceededError,
  RateLimitError,
  Shrinkray,
} from '../src/index.ts';
import { jsonLines, runCli, sameJpegs, scriptedService, withImages, type Scripted } from './helpers.ts';

const JPEG_BODY = new Uint8Array([0xff, 0xd8, 0xff, 0xd9]);
const OK: Scripted = {
  status: 200,
  body: JPEG_BODY,
  headers: {
    'content-type': 'image/jpeg',
    'x-original-size': '1000',
    'x-compressed-size': '4',
    'x-savings-percent': '99.6',
    'x-image-width': '8',
    'x-image-height': '8',
    'x-quality': '80',
    'content-disposition': 'inline; filename="a.jpg"',
    'x-ratelimit-limit': '10000',
    'x-ratelimit-remaining': '9999',
    'x-ratelimit-reset': '1767225600',
  },
};
const err = (status: number, code: string, retryAfter?: string): Scripted => ({
  status,
  code,
  ...(retryAfter === undefined ? {} : { headers: { 'retry-after': retryAfter } }),
});

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(script: Parameters<typeof scriptedService>[0]) {
  const service = await scriptedService(script);
  close = service.close;
  return service;
}

const image = new Uint8Array(1000).fill(7);
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe('retries', () => {
  it('retries 429 rate_limit_exceeded after Retry-After, then succeeds', async () => {
    const s = await serve(({ n }) => (n < 1 ? err(429, 'rate_limit_exceeded', '1') : OK));
    const retries: number[] = [];
    const client = new Shrinkray({ apiKey: 'sr_live_test', baseUrl: s.url, onRetry: (i) => retries.push(i.delayMs) });
    const result = await client.compress(image, { quality: 70 });
    expect(s.requests).toHaveLength(2);
    expect(retries).toEqual([1000]);
    expect(gaps(s.requests.map((r) => r.at))[0]).toBeGreaterThanOrEqual(950);
    // The upload is sent again in full on the retry.
    expect(s.requests[1]?.bytes).toBe(s.requests[0]?.bytes);
    expect(result).toMatchObject({
      compressedSize: 4,
      originalSize: 1000,
      savingsPercent: 99.6,
      format: 'jpeg',
      width: 8,
      quality: 80,
      filename: 'a.jpg',
    });
    expect(result.rateLimit).toEqual({ limit: 10000, remaining: 9999, reset: 1767225600 });
    expect([...result.data]).toEqual([...JPEG_BODY]);
    expect(s.requests[0]?.authorization).toBe('Bearer sr_live_test');
  });

  it('retries 503 overloaded with backoff when there is no Retry-After, and gives up after maxRetries', async () => {
    const s = await serve(() => err(503, 'overloaded'));
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url, maxRetries: 2 });
    const error = await client.compress(image).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OverloadedError);
    expect(error).toMatchObject({ status: 503, code: 'overloaded', retries: 2, retryAfter: undefined });
    expect(s.requests).toHaveLength(3);
    // 0.5 s then 1 s, each less up to 25% jitter.
    const [first, second] = gaps(s.requests.map((r) => r.at));
    expect(first).toBeGreaterThanOrEqual(370);
    expect(first).toBeLessThan(1500); // loose: a loaded machine only adds time
    expect(second).toBeGreaterThanOrEqual(740);
  });

  it('honours a 503 Retry-After and a per-call maxRetries', async () => {
    const s = await serve(({ n }) => (n < 3 ? err(503, 'overloaded', '0') : OK));
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url, maxRetries: 0 });
    await expect(client.compress(image)).rejects.toBeInstanceOf(OverloadedError);
    expect(s.requests).toHaveLength(1);
    const result = await client.compress(image, { maxRetries: 3 });
    expect(result.compressedSize).toBe(4);
    expect(s.requests).toHaveLength(4);
  });

  it('never retries 429 quota_exceeded, and says how long to wait', async () => {
    const s = await serve(() => err(429, 'quota_exceeded', '86400'));
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url });
    const error = await client.compress(image).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 429,
      code: 'quota_exceeded',
      retryAfter: 86400,
      retries: 0,
      requestId: 'req-1',
    });
    expect(s.requests).toHaveLength(1);
  });

  it('does not wait out a Retry-After longer than a minute', async () => {
    const s = await serve(() => err(429, 'rate_limit_exceeded', '3600'));
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url });
    const error = await client.account().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfter: 3600, retries: 0 });
    expect(s.requests).toHaveLength(1);
  });

  it('does not retry other errors; their class, code, status and param are typed', async () => {
    const s = await serve(({ path }) =>
      path === '/api/v1/account' ? err(401, 'unauthorized') : err(400, 'bad_request'),
    );
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url });
    await expect(client.account()).rejects.toBeInstanceOf(AuthenticationError);
    const bad = await client.compress(image, { quality: 7 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect(bad).toMatchObject({ status: 400, code: 'bad_request', param: 'quality' });
    expect(s.requests).toHaveLength(2);
  });

  it('an abort during the wait between retries ends the call at once', async () => {
    const s = await serve(() => err(503, 'overloaded', '30'));
    const client = new Shrinkray({ apiKey: 'k', baseUrl: s.url });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('stop')), 200);
    await expect(client.compress(image, { signal: controller.signal })).rejects.toThrow('stop');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('the CLI against the stand-in', () => {
  it('fails a file on quota_exceeded without retrying it, sends no more, and exits 1 with failures by code', async () => {
    await withImages('quota', sameJpegs(['in/a.jpg', 'in/b.jpg', 'in/c.jpg', 'in/d.jpg'], 32), async (dir) => {
      // The second upload finds the month used up.
      const s = await serve(({ n }) =>
        n === 0 ? err(503, 'overloaded', '0') : n === 2 ? err(429, 'quota_exceeded', '86400') : OK,
      );
      const r = await runCli(['compress', 'in', '--out', 'out', '--json', '--concurrency', '1'], {
        cwd: dir,
        env: { SHRINKRAY_API_KEY: 'sr_live_x', SHRINKRAY_BASE_URL: s.url },
      });
      expect(r.code, r.stderr).toBe(1);
      const lines = jsonLines(r.stdout);
      expect(lines.map((l) => [l.file, l.status, l.error?.code])).toEqual([
        ['in/a.jpg', 'ok', undefined],
        ['in/b.jpg', 'failed', 'quota_exceeded'],
        ['in/c.jpg', 'failed', 'not_sent'],
        ['in/d.jpg', 'failed', 'not_sent'],
      ]);
      expect(lines[0].retries).toBe(1);
      expect(lines[1].error).toMatchObject({ status: 429, code: 'quota_exceeded' });
      // 503 retried once (a), quota not retried (b), and nothing sent after it: three requests.
      expect(s.requests).toHaveLength(3);
      expect(r.stderr).toMatch(/^files\s+4 \(1 compressed, 0 kept, 0 skipped, 3 failed\)$/m);
      expect(r.stderr).toMatch(/^failed: quota_exceeded\s+1$/m);
      expect(r.stderr).toMatch(/^failed: not_sent\s+2$/m);
      expect(r.stderr).toContain('stopped: quota_exceeded would fail every remaining file (scripted 429); 2 not sent');
      expect(r.stderr).toContain('retry    in/a.jpg  overloaded');
    });
  });

  it('--concurrency 4 keeps four uploads in flight, never more', async () => {
    await withImages(
      'pool',
      sameJpegs(
        Array.from({ length: 10 }, (_, i) => `in/${i}.jpg`),
        16,
      ),
      async (dir) => {
        const s = await serve(() => ({ ...OK, delayMs: 150 }));
        const r = await runCli(['compress', 'in', '--out', 'out', '--concurrency', '4'], {
          cwd: dir,
          env: { SHRINKRAY_API_KEY: 'k', SHRINKRAY_BASE_URL: s.url },
        });
        expect(r.code, r.stderr).toBe(0);
        expect(s.requests).toHaveLength(10);
        expect(s.maxInFlight()).toBe(4);
      },
    );
  });

  it('refuses to start without a key or a service URL (exit 2)', async () => {
    const noKey = await runCli(['account'], { env: { SHRINKRAY_BASE_URL: 'http://127.0.0.1:9' } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/^error: no API key: set SHRINKRAY_API_KEY or pass --key/);
    const noUrl = await runCli(['account', '--key', 'k']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/^error: no service URL/);
  });
});
