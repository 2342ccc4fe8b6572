// Every input format to every output format, as a caller sees it: 200 with the right size, under a
// memory budget that a whole frame and a whole-image encoder would not fit (the rows stream from the
// decoder through the resampler to the encoder), and the engine's memory within the plan's estimate.
import { beforeAll, describe, expect, it } from 'vitest';
import { transformOf } from '../../src/compress/transform/options.ts';
import type { ImageFormat, InputFormat } from '../../src/compress/formats.ts';
import { readHeader } from '../../src/compress/header.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { PngRowEncoder } from '../../src/compress/png/encoder.ts';
import { encodeRowsWebp } from '../../wasm/webp-engine.ts';
import { resetWasmInstances, setWasmPoolLimit, wasmMemoryReport } from '../../wasm/instances.ts';
import { decodeAvif } from './avif-decode.ts';
import { makeKey, type TestKey } from './helpers.ts';
import {
  bodyBytes,
  compressCall,
  decodeAny,
  jpegOf,
  photo,
  pngOf,
  withJpegOrientation,
  type Parts,
} from './image-fixtures.ts';
import { lossyWebp, withMetadata } from './webp-fixtures.ts';

const MiB = 1024 * 1024;
/**
 * 0.96 MP: a whole frame with its RGBA copy and a whole-image encoder took 23–26 bytes a pixel (about
 * 22 MB, over the budget below); the rows prove the same at a quarter of the pixels of a photo-sized input.
 */
const [W, H] = [1200, 800];
/** Fits every pair in rows (the PNG outputs and a PNG upload held twice are most of it); none of the whole-frame paths. */
const BUDGET_MB = 20;
/** The budget of the smaller cases (orientation, grey, AVIF turned): room for their frames, as before. */
const SMALL_CASES_BUDGET_MB = 64;
/** The fewest bytes a pixel the whole-frame paths took. */
const WHOLE_FRAME_BYTES_PER_PIXEL = 23;

/**
 * AVIF output at a smaller size (its encoder takes seconds a megapixel in the test runner): the budget
 * still leaves no room for a whole RGBA frame (1.2 MiB) beside the encoder.
 */
const [AW, AH] = [640, 480];
/** The inputs converted here (GIF and AVIF have their own tests: test/worker/compress/gif.test.ts, avif-input.test.ts). */
type Input = Exclude<InputFormat, 'gif' | 'avif' | 'heic'>;

let pro: TestKey;
const inputs = {} as Record<Input, Uint8Array>;
const avifInputs = {} as Record<Input, Uint8Array>;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  const image = photo(W, H);
  inputs.jpeg = jpegOf(image, 90);
  // RGB, as a photo's PNG is (an alpha channel would plan for WebP's alpha encoder).
  const png = new PngRowEncoder({ width: W, height: H, colourType: 2 }, []);
  for (let y = 0; y < H; y++) await png.writeRow(image.data.subarray(y * W * 4, (y + 1) * W * 4));
  inputs.png = await png.finish();
  inputs.webp = encodeRowsWebp(W, H, { channels: 4, quality: 85, lossless: false }, (push) => push(image.data)).bytes;
  const small = photo(AW, AH);
  avifInputs.jpeg = jpegOf(small, 90);
  avifInputs.png = pngOf(small);
  avifInputs.webp = lossyWebp(small, 85);
}, 60_000);

const FILENAMES: Record<Input, string> = { jpeg: 'in.jpg', png: 'in.png', webp: 'in.webp' };
const FORMATS: Input[] = ['jpeg', 'png', 'webp'];
const PAIRS = FORMATS.flatMap((input) => FORMATS.map((output): [Input, ImageFormat] => [input, output]));

async function convert(input: Input, parts: Parts, budgetMb = SMALL_CASES_BUDGET_MB) {
  const res = await compressCall(
    pro.key,
    { filename: FILENAMES[input], ...parts },
    { env: { MEMORY_BUDGET_MB: String(budgetMb) } },
  );
  return { res, body: await bodyBytes(res) };
}

describe('every input to every output, in rows', () => {
  it.each(PAIRS)(
    '%s → %s: 200 at full size within the reduced budget, the engine within the estimate',
    async (input, output) => {
      const planned = plan(
        input,
        readHeader(input, inputs[input]),
        inputs[input].length,
        { format: output, quality: 80 },
        BUDGET_MB * MiB,
      );
      expect(planned.estimate).toBeLessThanOrEqual(BUDGET_MB * MiB);
      expect(W * H * WHOLE_FRAME_BYTES_PER_PIXEL).toBeGreaterThan(BUDGET_MB * MiB);
      resetWasmInstances();
      const { res, body } = await convert(input, { image: inputs[input], format: output }, BUDGET_MB);
      expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
      expect(res.headers.get('content-type')).toBe(`image/${output}`);
      // Read before the test's own decoder runs in its own instance.
      expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(planned.estimate);
      const decoded = decodeAny(body);
      expect([decoded.width, decoded.height]).toEqual([W, H]);
    },
    60_000,
  );

  it.each(['png', 'webp'] as const)(
    'a JPEG turned by its EXIF orientation (6) → %s: upright, the frame kept once',
    async (output) => {
      const image = photo(600, 400);
      const jpeg = withJpegOrientation(jpegOf(image, 90), 6);
      const { res, body } = await convert('jpeg', { image: jpeg, format: output, width: '200' });
      expect(res.status).toBe(200);
      const decoded = decodeAny(body);
      expect([decoded.width, decoded.height]).toEqual([200, 300]);
    },
  );

  it('a WebP turned by its EXIF orientation (8) → PNG: upright, the frame kept once', async () => {
    const webp = withMetadata(lossyWebp(photo(600, 400), 90), 600, 400, { orientation: 8 });
    const { res, body } = await convert('webp', { image: webp, format: 'png', width: '200' });
    expect(res.status).toBe(200);
    const decoded = decodeAny(body);
    expect([decoded.width, decoded.height]).toEqual([200, 300]);
  });

  it.each(['png', 'webp'] as const)('a grey JPEG → %s keeps its pixels grey', async (output) => {
    const image = photo(300, 200);
    for (let i = 0; i < image.data.length; i += 4) image.data[i + 1] = image.data[i + 2] = image.data[i]!;
    const { res, body } = await convert('jpeg', { image: jpegOf(image, 95), format: output });
    expect(res.status).toBe(200);
    const decoded = decodeAny(body);
    const [r, g, b] = decoded.data.subarray(4 * 150 * 300 + 400, 4 * 150 * 300 + 403);
    expect(Math.abs(r! - g!) + Math.abs(g! - b!)).toBeLessThanOrEqual(4);
  });
});

describe('every input to AVIF, in bands', () => {
  // The encoder's module takes seconds to load in the test runner: not inside the first test's time.
  beforeAll(() => import('../../wasm/avif-engine.ts'), 30_000);

  it.each(FORMATS)(
    '%s → avif: 200 at full size within a budget that a whole RGBA frame beside the encoder would not fit; the engines within the estimate',
    async (input) => {
      const planned = plan(input, readHeader(input, avifInputs[input]), avifInputs[input].length, {
        format: 'avif',
        quality: 80,
      });
      // The encoder's own peak (avif-settings.ts) is most of it; the rows must add no frame to it. The
      // budget is the estimate rounded up to whole MiB, less than a frame above it whatever the estimate.
      const budgetMb = Math.ceil(planned.estimate / MiB);
      expect(planned.estimate + AW * AH * 4).toBeGreaterThan(budgetMb * MiB);
      resetWasmInstances();
      const { res, body } = await convert(input, { image: avifInputs[input], format: 'avif' }, budgetMb);
      expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/avif');
      // Both engines' memories (the decoder's and the AVIF encoder's), read before anything else runs.
      expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(planned.estimate);
      const decoded = await decodeAvif(body);
      expect([decoded.width, decoded.height]).toEqual([AW, AH]);
    },
    60_000,
  );

  it('a JPEG turned by its EXIF orientation (6) → avif: upright, the frame kept once', async () => {
    const jpeg = withJpegOrientation(jpegOf(photo(600, 400), 90), 6);
    const { res, body } = await convert('jpeg', { image: jpeg, format: 'avif', width: '200' });
    expect(res.status).toBe(200);
    const decoded = await decodeAvif(body);
    expect([decoded.width, decoded.height]).toEqual([200, 300]);
  });
});

describe('memory under concurrency', () => {
  it('after another large conversion grew the engine, an AVIF conversion that fits the budget alone answers 200: idle memory gives way', async () => {
    const estimate = (bytes: Uint8Array, request: { format: ImageFormat; lossless?: boolean }) =>
      plan('jpeg', readHeader('jpeg', bytes), bytes.length, { quality: 80, ...request }).estimate;
    const grower = estimate(inputs.jpeg, { format: 'webp', lossless: true });
    const avif = estimate(avifInputs.jpeg, { format: 'avif' });
    const budgetMb = Math.ceil(Math.max(grower, avif) / MiB) + 1;
    resetWasmInstances();
    // The pool's limit only rises (an earlier test's larger budget would leave room): this budget's, as
    // a deployment has one.
    const previous = setWasmPoolLimit(budgetMb * MiB);
    try {
      // A lossless WebP of a larger picture, within the same budget, leaves the engine's instance grown and idle.
      const first = await convert('jpeg', { image: inputs.jpeg, format: 'webp', lossless: 'true' }, budgetMb);
      expect(first.res.status, new TextDecoder().decode(first.body.subarray(0, 300))).toBe(200);
      expect(wasmMemoryReport().live_bytes + avif).toBeGreaterThan(budgetMb * MiB);
      const { res, body } = await convert('jpeg', { image: avifInputs.jpeg, format: 'avif' }, budgetMb);
      expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
      expect(wasmMemoryReport().live_bytes).toBeLessThanOrEqual(budgetMb * MiB);
    } finally {
      setWasmPoolLimit(previous);
    }
  }, 120_000);

  it('after a larger conversion grew the engine, a transformed JPEG (a reader and a row encoder) answers 200: the grown instance gives way', async () => {
    resetWasmInstances();
    const previous = setWasmPoolLimit(SMALL_CASES_BUDGET_MB * MiB);
    try {
      // A lossless WebP leaves the engine's instance grown and idle.
      const first = await convert('jpeg', { image: inputs.jpeg, format: 'webp', lossless: 'true' });
      expect(first.res.status, new TextDecoder().decode(first.body.subarray(0, 300))).toBe(200);
      // The pool's limit just above it, as a deployment's budget is when such an instance is kept.
      const grown = wasmMemoryReport().live_bytes;
      setWasmPoolLimit(grown + 2 * MiB);
      const parts = { format: 'jpeg', fit: 'cover', width: String(W), height: String(H / 2) };
      const request = {
        format: 'jpeg' as const,
        quality: 80,
        width: W,
        height: H / 2,
        transform: transformOf({ fit: 'cover' }),
      };
      const budgetMb =
        Math.ceil(plan('jpeg', readHeader('jpeg', inputs.jpeg), inputs.jpeg.length, request).estimate / MiB) + 1;
      expect(budgetMb * MiB).toBeLessThanOrEqual(grown + 2 * MiB);
      // The cover reads the rows in one engine instance and encodes them in another: beside the grown idle
      // instance kept as the reader's, the encoder had no room to grow (503).
      const { res, body } = await convert('jpeg', { image: inputs.jpeg, ...parts }, budgetMb);
      expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
      expect(wasmMemoryReport().live_bytes).toBeLessThanOrEqual(grown + 2 * MiB);
    } finally {
      setWasmPoolLimit(previous);
    }
  }, 120_000);

  it('four large compressions at once: each 200 or 503 overloaded (never 500), one or more complete, one engine instance reused within the budget', async () => {
    resetWasmInstances();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => convert('jpeg', { image: inputs.jpeg, format: 'webp' }, BUDGET_MB)),
    );
    const statuses = results.map((r) => r.res.status);
    for (const status of statuses) expect([200, 503]).toContain(status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    const engine = wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;
    // Before the pool, each grown instance was dropped for the collector and the next request made another.
    expect(engine.instantiations).toBe(1);
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(BUDGET_MB * MiB);
  }, 120_000);

  it('four large AVIF compressions at once: each 200 or 503 overloaded (never 500), one or more complete, within the budget', async () => {
    // Large for its budget, which is the estimate's: a quarter of the other AVIF cases' pixels, since the
    // encodes queue one behind another (four of 800×600 took 7 s of a loaded run).
    const jpeg = jpegOf(photo(AW / 2, AH / 2), 90);
    const planned = plan('jpeg', readHeader('jpeg', jpeg), jpeg.length, {
      format: 'avif',
      quality: 80,
    });
    // Room for one at a time: the others wait in the gate's queue or are turned away.
    const budgetMb = Math.ceil(planned.estimate / MiB) + 1;
    resetWasmInstances();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => convert('jpeg', { image: jpeg, format: 'avif' }, budgetMb)),
    );
    const statuses = results.map((r) => r.res.status);
    for (const [i, status] of statuses.entries())
      expect([200, 503], new TextDecoder().decode(results[i]!.body.subarray(0, 300))).toContain(status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(wasmMemoryReport().codecs.find((c) => c.name === 'sr_avif')!.instantiations).toBe(1);
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(budgetMb * MiB);
  }, 180_000);
});
