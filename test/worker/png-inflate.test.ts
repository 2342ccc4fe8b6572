// The PNG decoder's inflater (src/compress/png/inflate.ts): zlib in bounded pieces, whatever the ratio,
// and a zlib bomb PNG answered within the memory budget (issue 47).
import { describe, expect, it } from 'vitest';
import { PngError } from '../../src/compress/png/chunks.ts';
import { INFLATE_HELD_BYTES, INFLATE_STEP_BYTES, Inflater } from '../../src/compress/png/inflate.ts';
import { iccProfile } from '../../src/compress/png/metadata.ts';
import { makeKey } from './helpers.ts';
import { compressCall } from './image-fixtures.ts';
import { cat, ihdrOf, zeroPng, zlib } from './png-fixtures.ts';

/** Everything the inflater gives, and the largest piece it gave at once. */
function inflateAll(pieces: Uint8Array[]): { bytes: Uint8Array; largest: number; steps: number } {
  const inflater = new Inflater(pieces);
  const parts: Uint8Array[] = [];
  let largest = 0;
  for (;;) {
    const piece = inflater.read();
    if (piece.length === 0) break;
    largest = Math.max(largest, piece.length);
    parts.push(piece.slice());
  }
  expect(inflater.done).toBe(true);
  return { bytes: cat(...parts), largest, steps: parts.length };
}

/** Deterministic bytes of every kind a PNG's rows have: noise, runs, repeats at all distances. */
function mixed(n: number): Uint8Array {
  const out = new Uint8Array(n);
  let seed = 12345;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const region = (i >> 14) % 4;
    out[i] =
      region === 0
        ? seed >>> 24
        : region === 1
          ? 7
          : region === 2
            ? out[i - 1 - ((seed >>> 20) % 300)]!
            : (i * 31) & 255;
  }
  return out;
}

const cut = (bytes: Uint8Array, size: number): Uint8Array[] =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('the inflater', () => {
  it("gives back what the runtime's deflater compressed, however the input is cut", async () => {
    const data = mixed(700_000);
    const compressed = await zlib(data);
    for (const size of [compressed.length, 8192, 1000, 1]) {
      expect(inflateAll(cut(compressed, size)).bytes).toEqual(data);
    }
  });

  it('holds the window and one piece: a 1,000:1 stream comes out INFLATE_STEP_BYTES at a time', async () => {
    const zeros = new Uint8Array(64 * 1024 * 1024);
    const compressed = await zlib(zeros);
    expect(compressed.length).toBeLessThan(zeros.length / 900);
    const { bytes, largest, steps } = inflateAll([compressed]);
    expect(bytes.length).toBe(zeros.length);
    expect(bytes.every((b) => b === 0)).toBe(true);
    expect(largest).toBe(INFLATE_STEP_BYTES);
    expect(steps).toBe(zeros.length / INFLATE_STEP_BYTES);
    expect(INFLATE_HELD_BYTES).toBeLessThanOrEqual(128 * 1024);
  });

  it('refuses what is not zlib, and data cut short, as PngError', async () => {
    expect(() => new Inflater([new Uint8Array([1, 2, 3, 4])]).read()).toThrow(PngError);
    const compressed = await zlib(mixed(300_000));
    expect(() => inflateAll([compressed.subarray(0, compressed.length >> 1)])).toThrow(PngError);
  });
});

describe('an iCCP chunk', () => {
  /** zlib of `bytes` zeros, deflated as they are made. */
  async function zeros(bytes: number): Promise<Uint8Array> {
    const deflater = new CompressionStream('deflate');
    const compressed = new Response(deflater.readable).arrayBuffer();
    const writer = deflater.writable.getWriter();
    const block = new Uint8Array(1024 * 1024);
    for (let i = 0; i < bytes / block.length; i++) await writer.write(block);
    await writer.close();
    return new Uint8Array(await compressed);
  }
  const iccp = (z: Uint8Array) => ({ type: 'iCCP', data: cat(new TextEncoder().encode('bomb\0\0'), z) });

  it('that inflates past the largest profile kept is dropped, not inflated (a 0.2 MB chunk of 256 MB)', async () => {
    const bomb = iccp(await zeros(256 * 1024 * 1024));
    expect(bomb.data.length).toBeLessThan(300 * 1024);
    // Its length, not the bytes: a failure would print 256 MB.
    expect((await iccProfile(bomb))?.length ?? null).toBeNull();
  }, 60_000);

  it('within it is inflated whole', async () => {
    const profile = mixed(200_000);
    expect(await iccProfile(iccp(await zlib(profile)))).toEqual(profile);
  });
});

describe('a zlib bomb PNG', () => {
  // 10000×10000 16-bit RGBA zeros: 800 MB of rows from 0.8 MB. Made once: deflating it takes seconds.
  let bomb: Promise<Uint8Array> | undefined;
  const bombPng = () => (bomb ??= zeroPng(10_000));

  it('is under 1 MB and declares 100 MP', async () => {
    const png = await bombPng();
    expect(png.length).toBeLessThan(1024 * 1024);
    expect(ihdrOf(png)).toEqual({ width: 10_000, height: 10_000, bitDepth: 16, colourType: 6 });
  }, 60_000);

  it('is answered 200 or 422 under a reduced memory budget, never 5xx, within 20 s', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    const png = await bombPng();
    const env = { MEMORY_BUDGET_MB: '40' };
    for (const parts of [{ width: '100' }, {}, { format: 'png', width: '100' }]) {
      const started = Date.now();
      const res = await compressCall(k.key, { image: png, filename: 'bomb.png', ...parts }, { env });
      const body = await res.arrayBuffer();
      expect(
        [200, 422],
        `${JSON.stringify(parts)}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`,
      ).toContain(res.status);
      expect(Date.now() - started).toBeLessThan(20_000);
    }
  }, 120_000);
});
