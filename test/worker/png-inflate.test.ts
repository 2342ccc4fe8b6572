// The PNG decoder's inflater (src/compress/png/inflate.ts): zlib in bounded pieces, whatever the ratio,
// and a zlib bomb PNG answered within the memory budget (issue 47).
import { describe, expect, it } from 'vitest';
import { PngError } from '../../src/compress/png/chunks.ts';
import { INFLATE_HELD_BYTES, INFLATE_STEP_BYTES, Inflater } from '../../src/compress/png/inflate.ts';
import { iccProfile } from '../../src/compress/png/metadata.ts';
import { MAX_ICC_PROFILE_BYTES } from '../../src/compress/limits.ts';
import { makeKey } from './helpers.ts';
import { compressCall } from './image-fixtures.ts';
import { cat, ihdrOf, zeroPng, zlib } from './png-fixtures.ts';

/** The memory budget the bomb is sent under, in MB. */
const BUDGET_MB = 40;

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
    // 8 MB is 128 steps: what 64 MB proved, at an eighth of the inflating and comparing.
    const zeros = new Uint8Array(8 * 1024 * 1024);
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

  it('that inflates past the largest profile kept is dropped, not inflated (a 32 KB chunk of 32 MB)', async () => {
    // Eight times MAX_ICC_PROFILE_BYTES; 256 MB took seconds to deflate and proved no more.
    const bomb = iccp(await zeros(8 * MAX_ICC_PROFILE_BYTES));
    expect(bomb.data.length).toBeLessThan(40 * 1024);
    // Its length, not the bytes: a failure would print 32 MB.
    expect((await iccProfile(bomb))?.length ?? null).toBeNull();
  }, 60_000);

  it('within it is inflated whole', async () => {
    const profile = mixed(200_000);
    expect(await iccProfile(iccp(await zlib(profile)))).toEqual(profile);
  });
});

describe('a zlib bomb PNG', () => {
  // 4000×4000 16-bit RGBA zeros: 128 MB of rows from 0.13 MB, three times the budget below and the same
  // 1,000:1 ratio as the attack's 100 MP (800 MB from 0.8 MB), whose time and memory are a figure of the
  // bench (`npm run bench -- png-bomb`, docs/benchmarks.md); here it took 10 s of an idle run. Made once.
  const SIDE = 4000;
  let bomb: Promise<Uint8Array> | undefined;
  const bombPng = () => (bomb ??= zeroPng(SIDE));

  it('is under 0.2 MB and declares 16 MP, whose rows are three times the budget', async () => {
    const png = await bombPng();
    expect(png.length).toBeLessThan(200 * 1024);
    expect(ihdrOf(png)).toEqual({ width: SIDE, height: SIDE, bitDepth: 16, colourType: 6 });
    expect(SIDE * SIDE * 8).toBeGreaterThan(3 * BUDGET_MB * 1024 * 1024);
  }, 60_000);

  it('is answered 200 or 422 under a reduced memory budget, never 5xx, within 10 s', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    const png = await bombPng();
    const env = { MEMORY_BUDGET_MB: String(BUDGET_MB) };
    for (const parts of [{ width: '100' }, {}, { format: 'png', width: '100' }]) {
      const started = Date.now();
      const res = await compressCall(k.key, { image: png, filename: 'bomb.png', ...parts }, { env });
      const body = await res.arrayBuffer();
      expect(
        [200, 422],
        `${JSON.stringify(parts)}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`,
      ).toContain(res.status);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  }, 60_000);
});
