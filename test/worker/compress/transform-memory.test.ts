// A transformation streams in rows: under a budget that admits a crop of a 1800×1200 JPEG only as rows
// (the whole decoded frame would not fit beside it), the crop is made; a quarter turn of the same image,
// whose whole output frame does not fit either, gathers it in bands (a decoder pass each); where not even
// bands fit, it is refused 422 naming the width that fits, and that width works.
// Blur and sharpen run in a budget that holds their windows of rows but not a frame of their output.
import { beforeAll, describe, expect, it } from 'vitest';
import { readHeader } from '../../../src/compress/header.ts';
import {
  enlargedOutputBytesPerPixel,
  outputBytesPerPixel,
  PADDING_OUTPUT_BYTES_PER_PIXEL,
  plan,
} from '../../../src/compress/memory-plan.ts';
import { transformOf } from '../../../src/compress/transform/options.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../../wasm/instances.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import {
  bodyBytes,
  compressCall,
  decodeAny,
  expectLargestWidthWorks,
  jpegOf,
  photo,
  withJpegOrientation,
} from '../image-fixtures.ts';

const MiB = 1024 * 1024;
const [W, H] = [1800, 1200];
const CROP_H = 300;
let pro: TestKey;
let jpeg: Uint8Array;
let env: { env: Record<string, string> };
let budgetMb: number;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  jpeg = jpegOf(photo(W, H), 85);
  const request = {
    format: 'jpeg' as const,
    quality: 80,
    width: W,
    height: CROP_H,
    transform: transformOf({ fit: 'crop' }),
  };
  const estimate = plan('jpeg', readHeader('jpeg', jpeg), jpeg.length, request).estimate;
  budgetMb = Math.ceil(estimate / MiB) + 1;
  // The case this test is about: the decoded frame alone would not fit beside the crop's rows.
  expect(estimate + W * H * 3).toBeGreaterThan(budgetMb * MiB);
  env = { env: { MEMORY_BUDGET_MB: String(budgetMb) } };
});

describe('transformations under a reduced memory budget', () => {
  it('a crop of a larger image runs in rows', async () => {
    const res = await compressCall(
      pro.key,
      { image: jpeg, fit: 'crop', width: String(W), height: String(CROP_H), gravity: 'bottom' },
      env,
    );
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect(res.headers.get('x-crop-box')).toBe(`0,${H - CROP_H},${W},${CROP_H}`);
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([W, CROP_H]);
  }, 30_000);

  it('a full-size crop of a JPEG stored turned (EXIF 6) keeps a frame of the box, not of the image', async () => {
    // Upright 1200×1800; trim keeps 300×300 at full size. The engine decodes only the box's window and
    // turns a frame of it; a frame of the whole image (6.5 MB) would not fit beside the request.
    const turned = withJpegOrientation(jpeg, 6);
    const trim = '750;450;750;450';
    const request = {
      format: 'jpeg' as const,
      quality: 80,
      transform: transformOf({ trim: { top: 750, right: 450, bottom: 750, left: 450 } }),
    };
    // The budget of the same crop of the image stored upright, and a megabyte: room for the box's frame.
    const estimate = plan('jpeg', readHeader('jpeg', jpeg), turned.length, request).estimate;
    const mb = Math.ceil(estimate / MiB) + 1;
    expect(estimate + W * H * 3).toBeGreaterThan(mb * MiB);
    const res = await compressCall(pro.key, { image: turned, trim }, { env: { MEMORY_BUDGET_MB: String(mb) } });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect(res.headers.get('x-crop-box')).toBe('450,750,300,300');
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([300, 300]);
  }, 30_000);

  it('blur and sharpen filter a window of rows: a frame of their output would not fit', async () => {
    const box = { width: String(W), height: String(H / 2) };
    const request = {
      format: 'jpeg' as const,
      quality: 80,
      width: W,
      height: H / 2,
      transform: transformOf({ fit: 'crop', blur: 20, sharpen: 3 }),
    };
    const estimate = plan('jpeg', readHeader('jpeg', jpeg), jpeg.length, request).estimate;
    const filtersMb = Math.ceil(estimate / MiB) + 1;
    expect(estimate + W * (H / 2) * 4).toBeGreaterThan(filtersMb * MiB);
    const res = await compressCall(
      pro.key,
      { image: jpeg, fit: 'crop', ...box, blur: '20', sharpen: '3' },
      { env: { MEMORY_BUDGET_MB: String(filtersMb) } },
    );
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([W, H / 2]);
  }, 30_000);

  it('rotate=90 gathers its frame in bands where the whole frame does not fit: the same picture', async () => {
    const request = { format: 'jpeg' as const, quality: 80, transform: transformOf({ rotate: 90 }) };
    const planned = plan('jpeg', readHeader('jpeg', jpeg), jpeg.length, request, budgetMb * MiB);
    // The case: a band (a decoder pass each) fits where the whole turned frame does not.
    expect(planned.turnBandRows).toBeGreaterThan(0);
    expect(planned.turnBandRows).toBeLessThan(W);
    const banded = await compressCall(pro.key, { image: jpeg, rotate: '90' }, env);
    const body = await bodyBytes(banded);
    expect(banded.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    const whole = decodeAny(await bodyBytes(await compressCall(pro.key, { image: jpeg, rotate: '90' })));
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([H, W]);
    let sum = 0;
    for (let i = 0; i < image.data.length; i++) sum += Math.abs(image.data[i]! - whole.data[i]!);
    // The banded one is streamed with the standard tables, the other progressive: the same quantised picture.
    expect(sum / image.data.length).toBeLessThan(1);
  }, 30_000);

  it('where not even bands fit, 422 names the width that fits, and that width works', async () => {
    const turned = { format: 'jpeg' as const, quality: 80, transform: transformOf({ rotate: 90 }) };
    const planAt = (mb: number) => plan('jpeg', readHeader('jpeg', jpeg), jpeg.length, turned, mb * MiB);
    // The largest budget that refuses the turn even in bands.
    let tight = budgetMb;
    while (tight > 1 && planAt(tight).estimate <= tight * MiB) tight--;
    expect(planAt(tight).turnBandRows).toBeUndefined();
    expect(tight).toBeGreaterThan(budgetMb / 2);
    const { error } = await expectLargestWidthWorks(pro.key, { image: jpeg, rotate: '90' }, H, {
      env: { MEMORY_BUDGET_MB: String(tight) },
    });
    expect(error.message).toMatch(/it fits with width=\d+ or less/);
  }, 30_000);

  it('an enlargement of a JPEG stored turned (EXIF 6) turns it before the upscale: no frame of the enlarged window', async () => {
    // Stored 300×200, upright 200×300; cover 1500×1500 resizes it to 1500×2250 and keeps 1500×1500. A
    // frame of that window (6.75 MB, what the engine kept to turn the resized rows) would not fit beside
    // the request; a frame of the decoded photo (180 KB) does.
    const stored = photo(300, 200);
    const turned = withJpegOrientation(jpegOf(stored, 90), 6);
    const upright: RgbaImage = { data: new Uint8Array(200 * 300 * 4), width: 200, height: 300 };
    const pixels = new Uint32Array(upright.data.buffer);
    const source = new Uint32Array(stored.data.buffer);
    for (let y = 0; y < 300; y++) for (let x = 0; x < 200; x++) pixels[y * 200 + x] = source[(199 - x) * 300 + y]!;
    const uprightJpeg = jpegOf(upright, 90);
    const request = {
      format: 'jpeg' as const,
      quality: 80,
      width: 1500,
      height: 1500,
      transform: transformOf({ fit: 'cover' }),
    };
    // The smallest budget of the same enlargement of the photo stored upright (its JPEG streamed), and a
    // megabyte: room for a frame of the decoded photo, not of the window.
    const uprightAt = (mb: number) =>
      plan('jpeg', readHeader('jpeg', uprightJpeg), turned.length, request, mb * MiB).estimate;
    let mb = 1;
    while (uprightAt(mb) > mb * MiB) mb++;
    mb++;
    expect(uprightAt(mb) + 1500 * 1500 * 3).toBeGreaterThan(mb * MiB);
    const estimate = plan('jpeg', readHeader('jpeg', turned), turned.length, request).estimate;
    const parts = { image: turned, fit: 'cover', width: '1500', height: '1500' };
    resetWasmInstances();
    const res = await compressCall(pro.key, parts, { env: { MEMORY_BUDGET_MB: String(mb) } });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    // What the engine's instances held, within the plan.
    const peak = wasmMemoryReport().peak_bytes;
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(estimate);
    // The same picture as the photo stored upright: EXIF 6 is a quarter turn clockwise.
    const reference = await compressCall(pro.key, { ...parts, image: uprightJpeg });
    expect(reference.status).toBe(200);
    const expected = decodeAny(await bodyBytes(reference));
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([1500, 1500]);
    let sum = 0;
    for (let i = 0; i < image.data.length; i++) sum += Math.abs(image.data[i]! - expected.data[i]!);
    expect(sum / image.data.length).toBeLessThan(2);
  }, 30_000);

  it('an enlargement at quality 100 is planned with the output an upscale writes, not a photo of that size at full detail', async () => {
    // 200×150 → cover 1500×1500 (10× wider and higher). A photo of 2.25 MP at quality 100 may write 1.2
    // bytes a pixel; its upscale writes far less (the detail is the small photo's). Within 2 MB of the
    // budget the same enlargement needs at quality 80, the quality-100 one is made.
    const small = jpegOf(photo(200, 150), 90);
    const parts = { image: small, fit: 'cover', width: '1500', height: '1500' };
    const at = (quality: number, mb: number) =>
      plan(
        'jpeg',
        readHeader('jpeg', small),
        small.length,
        { format: 'jpeg', quality, width: 1500, height: 1500, transform: transformOf({ fit: 'cover' }) },
        mb * MiB,
      ).estimate;
    let mb = 1;
    while (at(80, mb) > mb * MiB) mb++;
    mb += 2;
    // Two copies of the output at a full-detail photo's 1.2 bytes a pixel would not fit.
    expect(at(80, mb) + 1500 * 1500 * (outputBytesPerPixel(100) - outputBytesPerPixel(80)) * 2).toBeGreaterThan(
      mb * MiB,
    );
    resetWasmInstances();
    const res = await compressCall(pro.key, { ...parts, quality: '100' }, { env: { MEMORY_BUDGET_MB: String(mb) } });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(at(100, mb));
    // The output is within what the plan allowed it.
    expect(body.length).toBeLessThanOrEqual(1500 * 1500 * enlargedOutputBytesPerPixel(100, 10));
  }, 30_000);

  it('fit=pad counts its background as the few bytes a flat block writes, not as picture', async () => {
    // 300×50 padded into 1500×1500: the picture is 1500×250, the rest (1.9 MP) background. Within a
    // megabyte of what the same picture needs unpadded (fit=contain), at quality 100, it is made.
    const wide = jpegOf(photo(300, 50), 90);
    const at = (fit: 'contain' | 'pad', mb: number) =>
      plan(
        'jpeg',
        readHeader('jpeg', wide),
        wide.length,
        { format: 'jpeg', quality: 100, width: 1500, height: 1500, transform: transformOf({ fit }) },
        mb * MiB,
      ).estimate;
    let mb = 1;
    while (at('contain', mb) > mb * MiB) mb++;
    mb++;
    // The background at a picture's bytes a pixel (at the least, a 5× enlargement's), twice, would not fit.
    const background = 1500 * 1250;
    expect(at('contain', mb) + background * enlargedOutputBytesPerPixel(100, 5) * 2).toBeGreaterThan(mb * MiB);
    const parts = { image: wide, fit: 'pad', width: '1500', height: '1500', quality: '100' };
    const res = await compressCall(pro.key, parts, { env: { MEMORY_BUDGET_MB: String(mb) } });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['1500', '1500']);
    // What the background really wrote: the padded output less the unpadded one, within its allowance.
    const contain = await bodyBytes(
      await compressCall(pro.key, { ...parts, fit: 'contain' }, { env: { MEMORY_BUDGET_MB: String(mb) } }),
    );
    expect(body.length - contain.length).toBeLessThanOrEqual(background * PADDING_OUTPUT_BYTES_PER_PIXEL);
  }, 30_000);

  it('an enlargement to 24 MP is written as a streamed baseline JPEG, not with a 72 MB progressive buffer', async () => {
    // Progressive keeps every coefficient (3 bytes a pixel at 4:2:0): at 24 MP the engine outgrew the
    // plan and answered 503 on camera photos; above PROGRESSIVE_MAX_BUFFER_BYTES the rows are streamed.
    const small = jpegOf(photo(300, 200), 85);
    const res = await compressCall(pro.key, { image: small, fit: 'contain', width: '6000', height: '4000' });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['6000', '4000']);
    const frames = [0xc0, 0xc2].filter((m) => body.some((b, i) => b === 0xff && body[i + 1] === m));
    expect(frames).toEqual([0xc0]);
  }, 60_000);
});
