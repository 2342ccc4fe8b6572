// The key's meter of refused uploads: at most 30 a minute of uploads refused once their image was read
// (415, 422), then 429 rate_limit_exceeded with Retry-After until the minute ends. Parameter errors (400)
// do not count, successful compressions neither, and nothing of it touches the account's month.
import { describe, expect, it } from 'vitest';
import { FAILED_COMPRESSIONS_PER_MINUTE } from '../../src/metering/rules.ts';
import { makeKey, TestClock } from './helpers.ts';
import { compressCall, photo, pngOf } from './image-fixtures.ts';

const TINY = pngOf(photo(8, 8));
const BROKEN = TINY.slice(0, TINY.length - 20); // a PNG cut short: 422 unprocessable_image
const NOT_AN_IMAGE = new TextEncoder().encode('plain text, not an image'); // 415
const START = Date.UTC(2026, 10, 21, 12, 0, 5, 250); // mid-second, so Retry-After must round up

const remaining = (res: Response): string | null => res.headers.get('x-ratelimit-remaining');

async function expectStatus(res: Response, status: number, code?: string): Promise<any> {
  expect(res.status).toBe(status);
  if (status === 200) {
    await res.arrayBuffer();
    return undefined;
  }
  const { error } = await res.json<any>();
  if (code) expect(error.code).toBe(code);
  return error;
}

describe('uploads refused after reading the image, per key and minute', () => {
  it('30 are answered; the 31st gets 429 rate_limit_exceeded with Retry-After, until the minute ends; the month is untouched', async () => {
    expect(FAILED_COMPRESSIONS_PER_MINUTE).toBe(30);
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock(START);
    for (let i = 0; i < FAILED_COMPRESSIONS_PER_MINUTE; i++) {
      const res = await compressCall(k.key, { image: i % 2 === 0 ? BROKEN : NOT_AN_IMAGE }, { clock });
      await expectStatus(res, i % 2 === 0 ? 422 : 415);
      expect(remaining(res)).toBe('100'); // the month: never spent by a refusal
    }
    clock.advance(10_000);
    const limited = await compressCall(k.key, { image: TINY }, { clock });
    const error = await expectStatus(limited, 429, 'rate_limit_exceeded');
    expect(error.message).toMatch(/30 uploads refused/);
    // 12:00:15.250 → the minute ends at 12:01:00: 44.75 s, rounded up.
    expect(limited.headers.get('retry-after')).toBe('45');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('30');
    expect(remaining(limited)).toBe('0');

    // The next minute the key compresses again, and its month has lost nothing to the refusals.
    clock.advance(45_000);
    const ok = await compressCall(k.key, { image: TINY }, { clock });
    await expectStatus(ok, 200);
    expect(remaining(ok)).toBe('99');
  });

  it('parameter errors (400) do not count, and successful compressions do not spend the failure budget', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock(START);
    for (let i = 0; i < 40; i++)
      await expectStatus(await compressCall(k.key, { image: BROKEN, quality: 500 }, { clock }), 400, 'bad_request');
    for (let i = 0; i < 5; i++) await expectStatus(await compressCall(k.key, { image: TINY }, { clock }), 200);
    for (let i = 0; i < FAILED_COMPRESSIONS_PER_MINUTE - 1; i++)
      await expectStatus(await compressCall(k.key, { image: BROKEN }, { clock }), 422);
    // One refusal left: a success in between neither takes it nor is refused.
    await expectStatus(await compressCall(k.key, { image: TINY }, { clock }), 200);
    await expectStatus(await compressCall(k.key, { image: BROKEN }, { clock }), 422);
    await expectStatus(await compressCall(k.key, { image: TINY }, { clock }), 429, 'rate_limit_exceeded');
    // The month counted the six successes only.
    clock.advance(60_000);
    const ok = await compressCall(k.key, { image: TINY }, { clock });
    await expectStatus(ok, 200);
    expect(remaining(ok)).toBe(String(100 - 7));
  });

  it("the budget is the key's: another key is not limited", async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const clock = new TestClock(START);
    for (let i = 0; i < FAILED_COMPRESSIONS_PER_MINUTE; i++)
      await expectStatus(await compressCall(k.key, { image: BROKEN }, { clock }), 422);
    await expectStatus(await compressCall(k.key, { image: BROKEN }, { clock }), 429, 'rate_limit_exceeded');
    const other = await makeKey({ scopes: ['image'], image: 'free' });
    await expectStatus(await compressCall(other.key, { image: BROKEN }, { clock }), 422);
  });
});
