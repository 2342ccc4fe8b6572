// Files whose headers declare far more image than their data holds: a few hundred bytes claiming
// 10000×10000. They are refused with 422 before anything the size of the declared image is decoded or
// allocated: JPEG from its header (the data cannot hold the blocks), and in the engine per row band
// (it stops where the data ends) and before a progressive file's coefficients are allocated; PNG and
// WebP decoders stop where the data ends.
import { describe, expect, it } from 'vitest';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { encodePixelsJpeg, withJpegJob } from '../../wasm/jpeg-engine.ts';
import { makeKey } from './helpers.ts';
import { compressCall, concat, declaringSize, photo, pngOf, webpOf } from './image-fixtures.ts';

const MiB = 1024 * 1024;

function photoJpeg(width: number, height: number, progressive: boolean): Uint8Array {
  const rgba = photo(width, height).data;
  const rgb = rgba.filter((_, i) => i % 4 !== 3);
  return encodePixelsJpeg(rgb, width, height, 3, { quality: 90, progressive });
}

/** A valid 16×16 JPEG whose frame header says 10000×10000. */
const jpegLiar = (progressive: boolean): Uint8Array => declaringSize(photoJpeg(16, 16, progressive), 10000, 10000);

/** A lossy WebP (simple format) whose VP8 frame header says width × height. */
function webpLiar(width: number, height: number): Uint8Array {
  const out = webpOf(photo(16, 16)).slice();
  expect(String.fromCharCode(...out.subarray(12, 16))).toBe('VP8 ');
  const view = new DataView(out.buffer);
  view.setUint16(26, width, true);
  view.setUint16(28, height, true);
  return out;
}

const engineStats = () => wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;

async function expectUnprocessable(res: Response): Promise<string> {
  expect(res.status).toBe(422);
  const { error } = await res.json<any>();
  expect(error).toMatchObject({ code: 'unprocessable_image', param: 'image' });
  return error.message;
}

describe('JPEG liars through POST /api/v1/compress', () => {
  it.each([
    ['baseline', false],
    ['progressive', true],
  ])(
    'a %s JPEG of a few hundred bytes declaring 10000×10000 is 422 unprocessable_image from its header, the engine untouched',
    async (_, progressive) => {
      const k = await makeKey({ scopes: ['image'], image: 'pro' });
      const liar = jpegLiar(progressive);
      expect(liar.length).toBeLessThan(1000);
      resetWasmInstances();
      const message = await expectUnprocessable(await compressCall(k.key, { image: liar }));
      expect(message).toMatch(/bytes of image data cannot hold the 10000×10000 pixels/);
      expect(engineStats()).toMatchObject({ instantiations: 0, peak_bytes: 0 });
    },
  );

  it('16 baseline liars at once from one free key are all 422: none holds the memory budget, so no request is shed with 503', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => compressCall(k.key, { image: jpegLiar(false) })),
    );
    const codes = await Promise.all(answers.map(async (res) => `${res.status} ${(await res.json<any>()).error.code}`));
    expect(codes).toEqual(Array(16).fill('422 unprocessable_image'));
  });

  it('real JPEGs, baseline and progressive, 4:2:0 and grey, are not taken for liars', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    for (const progressive of [false, true]) {
      const res = await compressCall(k.key, { image: photoJpeg(640, 480, progressive) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // A flat image is the cheapest to code: every block a DC code and an end-of-block, barely above the bound.
    const flat = new Uint8Array(1024 * 1024).fill(128);
    for (const progressive of [false, true]) {
      const res = await compressCall(k.key, {
        image: encodePixelsJpeg(flat, 1024, 1024, 1, { quality: 50, progressive }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });
});

describe('JPEG liars in the engine', () => {
  it.each([
    ['baseline', false],
    ['progressive', true],
  ])('a %s liar is refused before any row is decoded or the image-sized buffers are allocated', (_, progressive) => {
    resetWasmInstances();
    const rows = withJpegJob(jpegLiar(progressive), (job) => {
      job.setPixels(8, 10000, 10000, 1);
      expect(() => job.encode(80, true, 'two_pass')).toThrow(/too short for the size its header declares/);
      return job.rowsDecoded;
    });
    expect(rows).toBe(0);
    // The progressive decoder's coefficients alone would be 300 MB.
    expect(engineStats().peak_bytes).toBeLessThan(16 * MiB);
  });

  it('a liar padded past the byte bound stops in its first row band, where its scan ends', () => {
    // The data still ends after one 16×16 MCU; the bytes after the end-of-image marker only pass the bound.
    const padded = concat(jpegLiar(false), new Uint8Array(700_000));
    resetWasmInstances();
    const rows = withJpegJob(padded, (job) => {
      job.setPixels(8, 10000, 10000, 1);
      expect(() => job.encode(80, true, 'stream')).toThrow();
      return job.rowsDecoded;
    });
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThanOrEqual(16);
  });

  it('a real JPEG cut short in its scan stops within a row band of where its data ends', () => {
    const whole = photoJpeg(512, 512, false);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.4));
    const rows = withJpegJob(cut, (job) => {
      job.setPixels(8, 512, 512, 1);
      expect(() => job.encode(80, true, 'stream')).toThrow(/Premature end|Corrupt JPEG/);
      return job.rowsDecoded;
    });
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(512 * 0.6);
  });
});

describe('PNG and WebP liars stop where their data ends', () => {
  it("a PNG whose IHDR declares 10000×10000 over a 16×16 image's IDAT is 422 at its first row", async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    const liar = declaringSize(pngOf(photo(16, 16)), 10000, 10000);
    expect(liar.length).toBeLessThan(2000);
    // A small output keeps the request inside the memory budget, so the decoder really runs.
    const message = await expectUnprocessable(await compressCall(k.key, { image: liar, width: 100, format: 'jpeg' }));
    expect(message).toMatch(/image data ends before the last row|corrupt or truncated/);
  });

  it("a WebP whose VP8 header declares 6000×6000 over a 16×16 image's data is 422 at its first macroblocks", async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    const liar = webpLiar(6000, 6000);
    expect(liar.length).toBeLessThan(2000);
    // libwebp's incremental decoder allocates its whole-image buffer once the header is parsed (within
    // the memory the request reserved from that header), then stops at the first macroblock its data
    // cannot hold; no rows past the data are decoded.
    const message = await expectUnprocessable(await compressCall(k.key, { image: liar, width: 100, format: 'jpeg' }));
    expect(message).toMatch(/the WebP image data is (corrupt|truncated)/);
  });
});
