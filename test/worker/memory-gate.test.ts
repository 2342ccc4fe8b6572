// Admission by memory: requests hold their estimate while they run; free requests are shed with 503
// when the budget is taken, pro requests wait in a bounded queue; a request that could never fit is
// 422 image_too_large naming the width that would; the estimate covers what the engine really uses.
import { afterEach, describe, expect, it } from 'vitest';
import { memoryInFlight, reserveMemory } from '../../src/compress/memory-gate.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { readHeader } from '../../src/compress/header.ts';
import { MEMORY_QUEUE_MAX } from '../../src/compress/limits.ts';
import { encodePixelsJpeg } from '../../wasm/jpeg-engine.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { makeKey } from './helpers.ts';
import { compressCall, declaringSize, expectLargestWidthWorks, photo, pngOf } from './image-fixtures.ts';

const MiB = 1024 * 1024;
const TINY = pngOf(photo(8, 8));
const remaining = (res: Response): string | null => res.headers.get('x-ratelimit-remaining');
const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));

const photoJpegs = new Map<string, Uint8Array>();

/**
 * A photo-like RGB JPEG of the given size, made by the engine once a file: the estimate's five cases
 * share two 1.9 MP inputs, each an encode of about a second on a loaded machine.
 */
function photoJpeg(width: number, height: number, progressive = false): Uint8Array {
  const name = `${width}x${height}${progressive ? 'p' : ''}`;
  let jpeg = photoJpegs.get(name);
  if (!jpeg) {
    const rgba = photo(width, height).data;
    const rgb = new Uint8Array(width * height * 3);
    for (let i = 0, o = 0; o < rgb.length; i += 4, o += 3) rgb.set(rgba.subarray(i, i + 3), o);
    jpeg = encodePixelsJpeg(rgb, width, height, 3, { quality: 90, progressive });
    photoJpegs.set(name, jpeg);
  }
  return jpeg;
}

afterEach(() => expect(memoryInFlight()).toEqual({ reserved: 0, waiting: 0 }));

describe('the gate', () => {
  it('admits while the sum fits; then free is refused and pro waits, in order, until memory is given back', async () => {
    const first = await reserveMemory('free', 60 * MiB, 96 * MiB);
    await expect(reserveMemory('free', 40 * MiB, 96 * MiB)).rejects.toMatchObject({ code: 'overloaded' });
    const order: string[] = [];
    const a = reserveMemory('pro', 40 * MiB, 96 * MiB).then((release) => (order.push('a'), release));
    const b = reserveMemory('pro', 10 * MiB, 96 * MiB).then((release) => (order.push('b'), release));
    await tick();
    expect(order).toEqual([]);
    // Free requests do not jump a queue, even when they would fit.
    await expect(reserveMemory('free', 1 * MiB, 96 * MiB)).rejects.toMatchObject({ code: 'overloaded' });
    expect(memoryInFlight()).toEqual({ reserved: 60 * MiB, waiting: 2 });
    first();
    first(); // a second call gives nothing back twice
    const [releaseA, releaseB] = await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect(memoryInFlight()).toEqual({ reserved: 50 * MiB, waiting: 0 });
    releaseA();
    releaseB();
  });

  it('the queue is bounded, and a pro request that waits too long gets 503 with Retry-After', async () => {
    const hold = await reserveMemory('pro', 90 * MiB, 96 * MiB);
    const waiting = Array.from({ length: MEMORY_QUEUE_MAX }, () => reserveMemory('pro', 10 * MiB, 96 * MiB, 60));
    const settled = Promise.allSettled(waiting);
    await expect(reserveMemory('pro', 10 * MiB, 96 * MiB)).rejects.toMatchObject({ code: 'overloaded' });
    const outcomes = await settled;
    expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as { code: string }).code === 'overloaded')).toBe(
      true,
    );
    expect((outcomes[0] as PromiseRejectedResult).reason.headers).toMatchObject({ 'Retry-After': '2' });
    hold();
  });
});

describe('POST /api/v1/compress under memory pressure', () => {
  it('free gets 503 overloaded (nothing spent) while the budget is held; pro waits and then runs', async () => {
    const [free, pro] = [
      await makeKey({ scopes: ['image'], image: 'free' }),
      await makeKey({ scopes: ['image'], image: 'pro' }),
    ];
    // 32 MB: room for one small request; the other reservation below takes 31 of it.
    const env = { env: { MEMORY_BUDGET_MB: '32' } };
    const other = await reserveMemory('pro', 31 * MiB, 32 * MiB); // another request's compression
    const shed = await compressCall(free.key, { image: TINY }, env);
    expect(shed.status).toBe(503);
    const { error } = await shed.json<any>();
    expect(error.code).toBe('overloaded');
    expect(error.message).toMatch(/pro/);
    expect(shed.headers.get('retry-after')).toBe('2');
    expect(remaining(shed)).toBe('100');

    let answered = false;
    const queued = compressCall(pro.key, { image: TINY }, env).then((res) => ((answered = true), res));
    await tick(50);
    expect(answered).toBe(false);
    expect(memoryInFlight().waiting).toBe(1);
    other();
    const served = await queued;
    expect(served.status).toBe(200);
    expect(remaining(served)).toBe('9999');
  });

  it('memory is given back when a request fails', async () => {
    const free = await makeKey({ scopes: ['image'], image: 'free' });
    const env = { env: { MEMORY_BUDGET_MB: '32' } };
    expect((await compressCall(free.key, { image: TINY.subarray(0, 40) }, env)).status).toBe(422);
    const truncated = photoJpeg(64, 64).subarray(0, 300);
    expect((await compressCall(free.key, { image: truncated }, env)).status).toBe(422);
    expect(memoryInFlight().reserved).toBe(0);
    expect((await compressCall(free.key, { image: TINY }, env)).status).toBe(200);
  });

  it('a request that could never fit is 422 image_too_large naming the largest width that fits, and that width works', async () => {
    const pro = await makeKey({ scopes: ['image'], image: 'pro' });
    const image = photoJpeg(2400, 1600);
    const env = { env: { MEMORY_BUDGET_MB: '8' } };
    const { error, max } = await expectLargestWidthWorks(pro.key, { image }, 2400, env);
    expect(error.message).toContain(`width=${max}`);
    expect(error.details.budget_bytes).toBe(8 * MiB);
    expect((await compressCall(pro.key, { image, width: String(max + 1) }, env)).status).toBe(422);
    // Three encodes of up to 3.8 MP: over 5 s on a loaded 2-core machine.
  }, 30_000);

  it('a header declaring 30000×30000 is refused from the header alone', async () => {
    const pro = await makeKey({ scopes: ['image'], image: 'pro' });
    const bomb = declaringSize(photoJpeg(16, 16), 30000, 30000);
    const started = Date.now();
    const res = await compressCall(pro.key, { image: bomb });
    expect(res.status).toBe(422);
    const { error } = await res.json<any>();
    expect(error.code).toBe('image_too_large');
    expect(error.details).toMatchObject({ width: 30000, height: 30000, max_pixels: 100_000_000 });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

// 1.9 MP compressions, the first of each input with its encode: past the default 5 s in whole runs at a load
// of 12-23 (every case in one run, one in another).
describe('the estimate against the engine', { timeout: 20_000 }, () => {
  it.each([
    ['baseline input, full size, progressive', false, {}, 'progressive', 96],
    ['progressive input, full size, progressive', true, {}, 'progressive', 96],
    ['baseline input, full size, two-pass in 8 MB', false, {}, 'two_pass', 8],
    ['progressive input, width 600, progressive in 12 MB', true, { width: '600' }, 'progressive', 12],
    ['baseline input, width 600, progressive', false, { width: '600' }, 'progressive', 96],
  ])('%s: the codecs’ memory stays within the estimate', async (_name, progressive, box, mode, budgetMb) => {
    const pro = await makeKey({ scopes: ['image'], image: 'pro' });
    const image = photoJpeg(1600, 1200, progressive);
    const planned = plan(
      'jpeg',
      readHeader('jpeg', image),
      image.length,
      {
        format: 'jpeg',
        quality: 80,
        width: (box as { width?: string }).width ? 600 : undefined,
      },
      budgetMb * MiB,
    );
    expect(planned.mode).toBe(mode);
    resetWasmInstances();
    const res = await compressCall(pro.key, { image, ...box }, { env: { MEMORY_BUDGET_MB: String(budgetMb) } });
    expect(res.status).toBe(200);
    // The engine's linear memory is part of the estimate, which also counts the JS copies of input,
    // pixels and output.
    const peak = wasmMemoryReport().peak_bytes;
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(planned.estimate);
    expect(planned.estimate).toBeLessThan(peak * 4 + 8 * MiB);
  });
});
