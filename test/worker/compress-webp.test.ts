// POST /api/v1/compress with WebP input, as a caller sees it: lossy, lossless and alpha inputs to WebP
// and JPEG, X-Image-Width/Height against the output's own header, the metadata rules (ICC kept, EXIF
// and XMP only with metadata=keep, orientation reset), the never-bigger rewrite that is never the
// input's bytes, animated WebP (now read), damaged files (422), and admission by memory.
import { beforeAll, describe, expect, it } from 'vitest';
import { plan, WEBP_TOKEN_GROWTH_BYTES } from '../../src/compress/memory-plan.ts';
import { readHeader } from '../../src/compress/header.ts';
import { encodeRowsWebp } from '../../wasm/webp-engine.ts';
import { encodeWebp } from '../../wasm/webp.ts';
import type { RgbaImage } from '../../wasm/image.ts';
import { webpOptions } from '../../src/compress/encoders.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { makeKey, type TestKey } from './helpers.ts';
import {
  QUADRANT_COLOURS,
  bodyBytes,
  compressCall,
  decodeAny,
  near,
  photo,
  pixel,
  quadrants,
  storeWithOrientation,
  type Parts,
} from './image-fixtures.ts';
import {
  XMP,
  animatedWebp,
  channelsOf,
  chunksOf,
  iccProfile,
  losslessWebp,
  lossyWebp,
  withMetadata,
} from './webp-fixtures.ts';

const MiB = 1024 * 1024;
let pro: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
});

async function compressed(parts: Parts, env?: Record<string, unknown>) {
  const res = await compressCall(pro.key, { filename: 'in.webp', ...parts }, env ? { env } : {});
  const body = await bodyBytes(res);
  return { res, body };
}

/** The canvas size a WebP declares: VP8X, VP8L or VP8 header. */
function declaredSize(webp: Uint8Array): [number, number] {
  const first = chunksOf(webp)[0]!;
  const d = first.data;
  if (first.tag === 'VP8X')
    return [1 + (d[4]! | (d[5]! << 8) | (d[6]! << 16)), 1 + (d[7]! | (d[8]! << 8) | (d[9]! << 16))];
  if (first.tag === 'VP8L') {
    const bits = d[1]! | (d[2]! << 8) | (d[3]! << 16) | (d[4]! << 24);
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  return [(d[6]! | (d[7]! << 8)) & 0x3fff, (d[8]! | (d[9]! << 8)) & 0x3fff];
}

function expectSizeHeaders(res: Response, body: Uint8Array, width: number, height: number): void {
  expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual([
    String(width),
    String(height),
  ]);
  const decoded = decodeAny(body);
  expect([decoded.width, decoded.height]).toEqual([width, height]);
  if (body[0] === 0x52) expect(declaredSize(body)).toEqual([width, height]);
}

describe('WebP to WebP', () => {
  it('lossy: 200, smaller than a q95 input, the size headers are the output’s own', async () => {
    const input = lossyWebp(photo(301, 203), 95);
    const { res, body } = await compressed({ image: input, format: 'webp' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(body.length).toBeLessThan(input.length);
    expect(channelsOf(body)).toEqual(['VP8 ']);
    expectSizeHeaders(res, body, 301, 203);
  });

  it.each([
    [150, 0],
    [0, 51],
    [99, 99],
  ])('resized to width=%i height=%i: the headers say the real size', async (width, height) => {
    const input = lossyWebp(photo(301, 203), 90);
    const box: Parts = {};
    if (width) box.width = width;
    if (height) box.height = height;
    const { res, body } = await compressed({ image: input, format: 'webp', ...box });
    expect(res.status).toBe(200);
    const scale = Math.min(width ? width / 301 : Infinity, height ? height / 203 : Infinity);
    expectSizeHeaders(res, body, Math.max(1, Math.round(301 * scale)), Math.max(1, Math.round(203 * scale)));
  });

  it('lossless input gives lossless output: VP8L, every pixel kept', async () => {
    const image = photo(97, 61, (x, y) => 1 + ((x * 5 + y) % 255));
    const { res, body } = await compressed({ image: losslessWebp(image), format: 'webp' });
    expect(res.status).toBe(200);
    expect(channelsOf(body)).toEqual(['VP8L']);
    expect(decodeAny(body).data).toEqual(image.data);
    expectSizeHeaders(res, body, 97, 61);
  });

  it('lossless input with target_kb is encoded lossy to reach the target', async () => {
    const { res, body } = await compressed({ image: losslessWebp(photo(200, 150)), format: 'webp', target_kb: 4 });
    expect(res.status).toBe(200);
    expect(channelsOf(body)).toContain('VP8 ');
    expect(body.length).toBeLessThanOrEqual(4 * 1024);
    expect(res.headers.get('x-target-reached')).toBe('true');
  });

  it('alpha is kept (VP8X + ALPH), transparent where it was', async () => {
    const image = photo(80, 40, (x) => (x < 40 ? 0 : 255));
    const { res, body } = await compressed({ image: lossyWebp(image, 95), format: 'webp', quality: 80 });
    expect(res.status).toBe(200);
    expect(channelsOf(body)).toEqual(['VP8X', 'ALPH', 'VP8 ']);
    const out = decodeAny(body);
    expect(pixel(out, 10, 20)[3]).toBe(0);
    expect(pixel(out, 70, 20)[3]).toBe(255);
  });

  it('EXIF orientation 6 is applied: the output is upright and carries no EXIF', async () => {
    const upright = quadrants(60, 40);
    const stored = storeWithOrientation(upright, 6);
    const input = withMetadata(lossyWebp(stored, 95), stored.width, stored.height, { orientation: 6 });
    const { res, body } = await compressed({ image: input, format: 'webp' });
    expect(res.status).toBe(200);
    expectSizeHeaders(res, body, 60, 40);
    expect(channelsOf(body)).not.toContain('EXIF');
    const out = decodeAny(body);
    expect(near(pixel(out, 5, 5), QUADRANT_COLOURS.tl, 30)).toBe(true);
    expect(near(pixel(out, 55, 35), QUADRANT_COLOURS.br, 30)).toBe(true);
  });
});

describe('WebP to JPEG', () => {
  it('lossy input: 200, JPEG of the right size', async () => {
    const { res, body } = await compressed({ image: lossyWebp(photo(257, 129), 90), format: 'jpeg' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expectSizeHeaders(res, body, 257, 129);
  });

  it('transparent pixels become white; resized', async () => {
    const image = quadrants(120, 80);
    for (let i = 3; i < image.data.length; i += 4) if (((i - 3) / 4) % 120 < 30) image.data[i] = 0;
    const { res, body } = await compressed({ image: losslessWebp(image), format: 'jpeg', width: 60, quality: 90 });
    expect(res.status).toBe(200);
    expectSizeHeaders(res, body, 60, 40);
    const out = decodeAny(body);
    expect(near(pixel(out, 3, 10), [255, 255, 255, 255], 10)).toBe(true);
    expect(near(pixel(out, 25, 10), QUADRANT_COLOURS.tl, 30)).toBe(true);
  });
});

describe('metadata', () => {
  const image = photo(64, 48);
  const icc = iccProfile();
  const input = () => withMetadata(lossyWebp(image, 95), 64, 48, { icc, orientation: 1, xmp: XMP });

  it('strip (the default): ICC kept, EXIF and XMP gone', async () => {
    const { res, body } = await compressed({ image: input(), format: 'webp' });
    expect(res.status).toBe(200);
    expect(channelsOf(body)).toEqual(['VP8X', 'ICCP', 'VP8 ']);
    expect(chunksOf(body)[1]!.data).toEqual(icc);
    expect(chunksOf(body)[0]!.data[0]).toBe(0x20);
  });

  it('keep: ICC, EXIF and XMP kept, orientation reset to 1 in both', async () => {
    const stored = withMetadata(lossyWebp(image, 95), 64, 48, { icc, orientation: 3, xmp: XMP });
    const { res, body } = await compressed({ image: stored, format: 'webp', metadata: 'keep' });
    expect(res.status).toBe(200);
    expect(channelsOf(body)).toEqual(['VP8X', 'ICCP', 'VP8 ', 'EXIF', 'XMP ']);
    const chunks = chunksOf(body);
    const exif = chunks.find((c) => c.tag === 'EXIF')!.data;
    expect(exif[18]).toBe(1); // IFD0's Orientation value
    expect(new TextDecoder().decode(chunks.find((c) => c.tag === 'XMP ')!.data)).toContain('tiff:Orientation="1"');
    expect(chunks[0]!.data[0]).toBe(0x20 | 0x08 | 0x04);
  });

  it('a profile for another colour model (CMYK) is not kept', async () => {
    const cmyk = withMetadata(lossyWebp(image, 95), 64, 48, { icc: iccProfile('CMYK') });
    const { body } = await compressed({ image: cmyk, format: 'webp' });
    expect(channelsOf(body)).toEqual(['VP8 ']);
  });

  it('JPEG output: the ICC profile goes into APP2, nothing else with strip; EXIF in APP1 with keep', async () => {
    const segments = (jpeg: Uint8Array): number[] => {
      const codes: number[] = [];
      for (let at = 2; jpeg[at] === 0xff && jpeg[at + 1] !== 0xda; at += 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!))
        codes.push(jpeg[at + 1]!);
      return codes.filter((c) => c >= 0xe1 && c <= 0xef);
    };
    const strip = await compressed({ image: input(), format: 'jpeg' });
    expect(segments(strip.body)).toEqual([0xe2]);
    const keep = await compressed({ image: input(), format: 'jpeg', metadata: 'keep' });
    expect(segments(keep.body).sort()).toEqual([0xe1, 0xe1, 0xe2]);
  });

  it('never bigger: a lossy result not smaller than the input is the input re-packed without its metadata, never the input', async () => {
    const small = withMetadata(lossyWebp(image, 30), 64, 48, { icc, orientation: 1, xmp: XMP });
    const { res, body } = await compressed({ image: small, format: 'webp', quality: 100 });
    expect(res.status).toBe(200);
    expect(body).not.toEqual(small);
    expect(body.length).toBeLessThan(small.length);
    expect(channelsOf(body)).toEqual(['VP8X', 'ICCP', 'VP8 ']);
    // The input's own bitstream, untouched.
    expect(chunksOf(body)[2]!.data).toEqual(chunksOf(small).find((c) => c.tag === 'VP8 ')!.data);
  });
});

describe('refusals', () => {
  it('animated WebP is no longer refused: as WebP, every frame (X-Frames 2/2); as JPEG, the first (1/2)', async () => {
    // Hand-made frames (webp-fixtures.ts), not our encoder's: test/worker/compress/anim-input.test.ts has the rest.
    const animated = await compressed({ image: animatedWebp(), format: 'webp' });
    expect(animated.res.status).toBe(200);
    expect(animated.res.headers.get('x-frames')).toBe('2/2');
    const first = await compressed({ image: animatedWebp(), format: 'jpeg' });
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('x-frames')).toBe('1/2');
    expect(decodeAny(first.body).data[0]).toBeLessThan(80);
  });

  it.each([
    [
      'truncated lossy',
      () => {
        const b = lossyWebp(photo(200, 100), 90);
        return b.subarray(0, b.length >> 1);
      },
    ],
    [
      'truncated lossless',
      () => {
        const b = losslessWebp(photo(200, 100));
        return b.subarray(0, b.length >> 1);
      },
    ],
    [
      'truncated, RIFF size patched to match',
      () => {
        const b = lossyWebp(photo(200, 100), 90).slice(0, 600);
        new DataView(b.buffer).setUint32(4, b.length - 8, true);
        new DataView(b.buffer).setUint32(16, b.length - 20, true);
        return b;
      },
    ],
    [
      'corrupt lossless data',
      () => {
        const b = losslessWebp(photo(200, 100)).slice();
        for (let i = 40; i < b.length - 8; i += 5) b[i] = b[i]! ^ 0x3c;
        return b;
      },
    ],
  ])('%s → 422 unprocessable_image, for WebP and JPEG output', async (_name, make) => {
    for (const format of ['webp', 'jpeg']) {
      const { res, body } = await compressed({ image: make(), format });
      expect(res.status).toBe(422);
      expect(JSON.parse(new TextDecoder().decode(body)).error.code).toBe('unprocessable_image');
    }
  });
});

// Encodes of 0.7 to 2.2 MP: the lossless one ran past the default 5 s in whole runs at a load of 12-23.
describe('memory', { timeout: 20_000 }, () => {
  const made = new Map<string, Uint8Array>();
  /**
   * A photo-like lossy WebP made by the engine's own row encoder (1.5 bytes per pixel, not RGBA), once per
   * size for the file: the tests only read it.
   */
  function bigWebp(width: number, height: number): Uint8Array {
    const size = `${width}x${height}`;
    let image = made.get(size);
    if (!image) made.set(size, (image = encodeBigWebp(width, height)));
    return image;
  }
  /**
   * A lossless WebP at libwebp's least effort: the engine decodes and holds the same picture as from a
   * smaller file, and the input's encode at the default effort was most of the case's time (10.4 -> 3.3 s
   * at a load of 17).
   */
  const fastLosslessWebp = (image: RgbaImage): Uint8Array =>
    encodeWebp(image, { ...webpOptions(0), method: 0, lossless: 1, exact: 1 });
  function encodeBigWebp(width: number, height: number): Uint8Array {
    return encodeRowsWebp(width, height, { channels: 3, quality: 85, lossless: false }, (push) => {
      const band = photo(width, 64);
      for (let y = 0; y < height; y += 64) {
        const rows = Math.min(64, height - y);
        push(band.data.subarray(0, rows * width * 4).filter((_, i) => i % 4 !== 3));
      }
    }).bytes;
  }

  it('a WebP that could never fit is 422 image_too_large with the largest width, and that width works', async () => {
    // The memory tests' image, made once.
    const image = bigWebp(1800, 1200);
    const env = { MEMORY_BUDGET_MB: '12' };
    const refused = await compressed({ image, format: 'webp' }, env);
    expect(refused.res.status).toBe(422);
    const { error } = JSON.parse(new TextDecoder().decode(refused.body));
    expect(error.code).toBe('image_too_large');
    const max = error.details.max_width as number;
    expect(max).toBeGreaterThan(100);
    expect(max).toBeLessThan(1800);
    expect(error.message).toContain(`width=${max}`);
    const fits = await compressed({ image, format: 'webp', width: max }, env);
    expect(fits.res.status).toBe(200);
    expect(fits.res.headers.get('x-image-width')).toBe(String(max));
    // Two encodes of up to 2.2 MP: over 5 s on a loaded 2-core machine.
  }, 30_000);

  it.each([
    ['lossy → WebP', false, 'webp', {}],
    ['lossy → WebP, width 900', false, 'webp', { width: 900 }],
    ['lossy → JPEG', false, 'jpeg', {}],
    ['lossless → WebP', true, 'webp', {}],
  ] as const)('%s: the engine’s memory stays within the estimate', async (_name, lossless, format, box) => {
    const image = lossless ? fastLosslessWebp(photo(1000, 700)) : bigWebp(1800, 1200);
    const planned = plan('webp', readHeader('webp', image), image.length, { format, quality: 80, ...box }, 100 * MiB);
    resetWasmInstances();
    const { res } = await compressed({ image, format, ...box });
    expect(res.status).toBe(200);
    const peak = wasmMemoryReport().peak_bytes;
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(planned.estimate);
    expect(planned.estimate).toBeLessThan(peak * 3 + 8 * MiB);
  });

  it('a 16.8 MP opaque lossy WebP to WebP tries the token buffer within its allowance; with alpha, or a tighter budget, low-memory mode', () => {
    const header = {
      width: 4096,
      height: 4096,
      orientation: 1 as const,
      hasAlphaChannel: false,
      defect: null,
      webp: { lossless: false },
    };
    const bounded = plan('webp', header, 3 * MiB, { format: 'webp', quality: 80 }, 100 * MiB);
    expect(bounded.webp).toEqual({ lossless: false, lowMemory: false, tokenGrowthBytes: WEBP_TOKEN_GROWTH_BYTES });
    const low = plan('webp', header, 3 * MiB, { format: 'webp', quality: 80 }, bounded.estimate - 1);
    expect(low.webp).toEqual({ lossless: false, lowMemory: true });
    expect(low.estimate).toBeLessThan(bounded.estimate);
    const alpha = plan(
      'webp',
      { ...header, hasAlphaChannel: true },
      3 * MiB,
      { format: 'webp', quality: 80 },
      1024 * MiB,
    );
    expect(alpha.webp).toEqual({ lossless: false, lowMemory: true });
  });
});
