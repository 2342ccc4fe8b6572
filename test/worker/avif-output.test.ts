// format=avif as a caller sees it: each input becomes an AVIF that decodes (with sharp) to the right size
// and orientation, alpha kept, EXIF and XMP only with metadata=keep and upright; a grid-encoded picture has no seams at its cell boundaries; target_kb
// searches as for WebP; the free tier is refused as for WebP. Images stay small (the whole suite's time):
// conversions.test.ts has the large ones that prove streaming.
import { beforeAll, describe, expect, it } from 'vitest';
import { readHeader } from '../../src/compress/header.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import { avifGrid } from '../../wasm/avif-settings.ts';
import type { RgbaImage } from '../../wasm/image.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { encodePixelsJpeg } from '../../wasm/jpeg-engine.ts';
import { decodeAvif, type DecodedAvif } from './avif-decode.ts';
import { makeKey, type TestKey } from './helpers.ts';
import {
  bodyBytes,
  compressCall,
  exifTiff,
  jpegOf,
  near,
  pixel,
  photo,
  pngOf,
  QUADRANT_COLOURS,
  quadrants,
  storeWithOrientation,
  withJpegOrientation,
  type Parts,
} from './image-fixtures.ts';
import { ascii, cat, makePng, zlib } from './png-fixtures.ts';
import { iccProfile, lossyWebp, withMetadata } from './webp-fixtures.ts';

let pro: TestKey;
let free: TestKey;

beforeAll(async () => {
  [pro, free] = await Promise.all([makeKey({ image: 'pro' }), makeKey({ image: 'free' })]);
  // The encoder's module takes seconds to load in the test runner: not inside the first test's time.
  await import('../../wasm/avif-engine.ts');
}, 30_000);

async function avifOf(parts: Parts): Promise<{ res: Response; decoded: DecodedAvif; bytes: Uint8Array }> {
  const res = await compressCall(pro.key, { format: 'avif', ...parts });
  const bytes = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(bytes.subarray(0, 300))).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/avif');
  return { res, bytes, decoded: await decodeAvif(bytes) };
}

/**
 * What an AVIF says of its depth: its first pixel information (channels, then bits a channel) and its AV1
 * configuration's high_bitdepth.
 */
function codedDepth(bytes: Uint8Array): { pixi: number[]; highBitdepth: number } {
  const after = (box: string) => {
    for (let i = 0; i + 4 <= bytes.length; i++)
      if (String.fromCharCode(...bytes.subarray(i, i + 4)) === box) return i + 4;
    throw new Error(`no ${box} box`);
  };
  // pixi: version and flags, num_channels, bits_per_channel each; av1C: marker and version, profile and
  // level, then seq_tier_0, high_bitdepth, twelve_bit …
  const pixi = after('pixi');
  return { pixi: [...bytes.subarray(pixi + 4, pixi + 8)], highBitdepth: (bytes[after('av1C') + 2]! >> 6) & 1 };
}

/** The quadrants' colours where a viewer shows them (upright, width × height). */
function expectQuadrants(image: RgbaImage, width: number, height: number): void {
  expect([image.width, image.height]).toEqual([width, height]);
  const at = (fx: number, fy: number) => pixel(image, Math.floor(width * fx), Math.floor(height * fy));
  expect(near(at(0.2, 0.2), QUADRANT_COLOURS.tl, 16), 'top left').toBe(true);
  expect(near(at(0.8, 0.2), QUADRANT_COLOURS.tr, 16), 'top right').toBe(true);
  expect(near(at(0.2, 0.8), QUADRANT_COLOURS.bl, 16), 'bottom left').toBe(true);
  expect(near(at(0.8, 0.8), QUADRANT_COLOURS.br, 16), 'bottom right').toBe(true);
}

describe('format=avif', () => {
  it.each([
    ['jpeg', 'in.jpg', jpegOf(quadrants(320, 240), 90)],
    ['png', 'in.png', pngOf(quadrants(320, 240))],
    ['webp', 'in.webp', lossyWebp(quadrants(320, 240))],
  ] as const)('a %s becomes an AVIF of the same size and colours', async (_, filename, image) => {
    const { res, decoded } = await avifOf({ image, filename });
    expect(res.headers.get('content-disposition')).toBe('inline; filename="in.avif"');
    expect(decoded.format).toBe('heif');
    expectQuadrants(decoded, 320, 240);
  });

  it('resizes as asked, like every other format', async () => {
    const { res, decoded } = await avifOf({ image: jpegOf(quadrants(320, 240), 90), width: '100' });
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['100', '75']);
    expectQuadrants(decoded, 100, 75);
  });

  it('transformations turn the rows before the encoder: rotate=90 of a WebP (issue 48)', async () => {
    const { decoded } = await avifOf({ image: lossyWebp(quadrants(96, 64)), filename: 'in.webp', rotate: '90' });
    // Clockwise: the bottom left comes to the top left.
    expect([decoded.width, decoded.height]).toEqual([64, 96]);
    const at = (x: number, y: number) => pixel(decoded, x, y);
    expect(near(at(8, 8), QUADRANT_COLOURS.bl, 16) && near(at(55, 8), QUADRANT_COLOURS.tl, 16)).toBe(true);
    expect(near(at(8, 87), QUADRANT_COLOURS.br, 16) && near(at(55, 87), QUADRANT_COLOURS.tr, 16)).toBe(true);
  });

  it("applies a JPEG's EXIF orientation (6) and a WebP's (8): the pixels come out upright", async () => {
    const upright = quadrants(240, 160);
    const jpeg = withJpegOrientation(jpegOf(storeWithOrientation(upright, 6), 95), 6);
    expectQuadrants((await avifOf({ image: jpeg })).decoded, 240, 160);
    const stored = storeWithOrientation(upright, 8);
    const webp = withMetadata(lossyWebp(stored, 95), stored.width, stored.height, { orientation: 8 });
    expectQuadrants((await avifOf({ image: webp, filename: 'in.webp' })).decoded, 240, 160);
  });

  describe('metadata=keep: EXIF and XMP go in, their orientation reset to 1 (the pixels are upright); none without it', () => {
    const xmpPacket = (orientation: number) =>
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="${orientation}"/></rdf:RDF></x:xmpmeta>`;
    /** The JPEG with an APP1 XMP segment inserted after SOI. */
    const withJpegXmp = (jpeg: Uint8Array, packet: string) => {
      const payload = cat(ascii('http://ns.adobe.com/xap/1.0/\0'), ascii(packet));
      const length = payload.length + 2;
      return cat(jpeg.subarray(0, 2), Uint8Array.of(0xff, 0xe1, length >> 8, length & 255), payload, jpeg.subarray(2));
    };
    const jpegTagged = (width: number, height: number) =>
      withJpegXmp(withJpegOrientation(jpegOf(storeWithOrientation(quadrants(width, height), 6), 95), 6), xmpPacket(6));
    const webpTagged = () => {
      const stored = storeWithOrientation(quadrants(240, 160), 8);
      return withMetadata(lossyWebp(stored, 95), stored.width, stored.height, {
        orientation: 8,
        xmp: ascii(xmpPacket(8)),
      });
    };
    const cases = [
      ['a JPEG', 'in.jpg', 240, 160, () => jpegTagged(240, 160)],
      ['a WebP', 'in.webp', 240, 160, webpTagged],
      // Wider than a cell: a grid, whose metadata libavif takes from its first cell.
      ['a JPEG encoded as a grid', 'in.jpg', 1040, 64, () => jpegTagged(1040, 64)],
    ] as const;

    it.each(cases)('%s', async (_, filename, width, height, image) => {
      const { decoded } = await avifOf({ image: image(), filename, metadata: 'keep' });
      expectQuadrants(decoded, width, height);
      // The input's TIFF block with its Orientation set to 1, nothing else changed (and no rotation property:
      // sharp applies one, which would turn the quadrants).
      expect([...decoded.exif.subarray(-exifTiff(1).length)]).toEqual([...exifTiff(1)]);
      expect(decoded.xmp).toContain(xmpPacket(1));
    });

    it.each(cases)('%s, without metadata=keep', async (_, filename, width, height, image) => {
      const { decoded } = await avifOf({ image: image(), filename });
      expectQuadrants(decoded, width, height);
      expect(decoded.exif.length).toBe(0);
      expect(decoded.xmp).toBe('');
    });
  });

  it('a picture wider than a cell but under 64 pixels high (a grid would need smaller cells than MIAF allows) is one image', async () => {
    const { decoded } = await avifOf({ image: pngOf(quadrants(1100, 40)), filename: 'in.png' });
    expectQuadrants(decoded, 1100, 40);
  });

  it('a camera JPEG is coded at 10 bits (its pixel information and AV1 configuration say so); white and black stay exact', async () => {
    // libaom's high bit depth path writes fewer bytes at the same SSIMULACRA2 (wasm/avif-settings.ts AVIF_DEPTH);
    // the 8-bit YUV of each cell is widened as it is encoded, white to 1023, chroma about 512.
    const image = photo(192, 128);
    for (let y = 16; y < 48; y++)
      for (let x = 16; x < 80; x++) image.data.set(x < 48 ? [255, 255, 255] : [0, 0, 0], (y * 192 + x) * 4);
    const { bytes, decoded } = await avifOf({ image: jpegOf(image, 95), quality: '90' });
    expect(codedDepth(bytes)).toEqual({ pixi: [3, 10, 10, 10], highBitdepth: 1 });
    expect(pixel(decoded, 32, 32).slice(0, 3)).toEqual([255, 255, 255]);
    expect(pixel(decoded, 64, 32).slice(0, 3)).toEqual([0, 0, 0]);
    let error = 0;
    for (let i = 0; i < image.data.length; i++) if (i % 4 !== 3) error += Math.abs(decoded.data[i]! - image.data[i]!);
    expect(error / ((image.data.length / 4) * 3)).toBeLessThan(4);
  });

  it('a camera JPEG is planned at 10 bits where they fit the budget, else at 8: admitted, not refused', async () => {
    // 10 bits add more than the 1 MiB a budget is rounded to (AVIF_WIDE_CELL_BYTES_PER_PIXEL).
    const image = jpegOf(photo(384, 256), 90);
    const MiB = 1024 * 1024;
    const planned = (budget: number) =>
      plan('jpeg', readHeader('jpeg', image), image.length, { format: 'avif', quality: 80 }, budget);
    expect(planned(Infinity).avifDepth).toBe(10);
    // A budget of 0 fits nothing: the plan at 8 bits, whose estimate sets a budget that 10 bits exceed.
    const tightMb = Math.ceil(planned(0).estimate / MiB);
    expect(planned(tightMb * MiB).avifDepth ?? 8).toBe(8);
    const res = await compressCall(pro.key, { image, format: 'avif' }, { env: { MEMORY_BUDGET_MB: String(tightMb) } });
    const bytes = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(bytes.subarray(0, 300))).toBe(200);
    expect(codedDepth(bytes)).toEqual({ pixi: [3, 8, 8, 8], highBitdepth: 0 });
  }, 15_000);

  it("keeps a PNG's alpha channel", async () => {
    const image = quadrants(160, 120);
    for (let y = 0; y < 120; y++) for (let x = 0; x < 160; x++) image.data[(y * 160 + x) * 4 + 3] = x < 80 ? 255 : 64;
    const { decoded } = await avifOf({ image: pngOf(image), filename: 'in.png' });
    expect(decoded.hasAlpha).toBe(true);
    expect(pixel(decoded, 20, 20)[3]).toBeGreaterThanOrEqual(250);
    expect(Math.abs(pixel(decoded, 140, 20)[3] - 64)).toBeLessThanOrEqual(8);
  });

  it('a thumbnail is encoded at speed 6: fewer bytes at the same quality than speed 7, no more error', async () => {
    // At speed 7 (before thumbnails took 6) this picture at libavif 68 (q80 then) was 2,826 bytes with a
    // mean error of 3.344 per channel; the API quality that still maps to 68 keeps the comparison.
    const q = Array.from({ length: 100 }, (_, i) => i + 1).find((q) => encoderQuality('avif', q) === 68)!;
    const image = photo(160, 120);
    const { bytes, decoded } = await avifOf({ image: pngOf(image), filename: 'thumb.png', quality: String(q) });
    let error = 0;
    for (let i = 0; i < image.data.length; i++) if (i % 4 !== 3) error += Math.abs(decoded.data[i]! - image.data[i]!);
    error /= (image.data.length / 4) * 3;
    expect(bytes.length).toBeLessThan(2826);
    expect(error).toBeLessThanOrEqual(3.344);
  });

  it('target_kb: the highest quality that fits, as for WebP', async () => {
    const image = jpegOf(photo(320, 240), 95);
    const { res, bytes } = await avifOf({ image, target_kb: '3' });
    expect(res.headers.get('x-target-reached')).toBe('true');
    expect(bytes.length).toBeLessThanOrEqual(3 * 1024);
    expect(Number(res.headers.get('x-quality'))).toBeLessThan(80);
  }, 15_000);

  it('a grid-encoded picture decodes without seams: the step across a cell boundary is no larger than inside a cell', async () => {
    // Wide enough for two columns of cells, short to keep the test quick; a smooth diagonal gradient.
    let width = 64;
    while (avifGrid(width, 64).cols < 2) width += 64;
    width += 64;
    const height = 64;
    const image = { data: new Uint8Array(width * height * 4), width, height };
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        image.data.set(
          [(x * 200) / width + 20, (y * 150) / height + 50, 128 + 60 * Math.sin(x / 90), 255],
          (y * width + x) * 4,
        );
    const { decoded } = await avifOf({ image: pngOf(image), filename: 'grid.png', quality: '90' });
    expect([decoded.width, decoded.height]).toEqual([width, height]);
    // Cells are even-sized and all but the last the same width (wasm/src/sr_avif.c).
    const cols = avifGrid(width, height).cols;
    const cellWidth = (Math.ceil(width / cols) + 1) & ~1;
    const boundaries = new Set(Array.from({ length: cols - 1 }, (_, i) => (i + 1) * cellWidth));
    // The decoded picture's error against the source, averaged down each column per channel: a seam is a
    // jump in it between the two columns either side of a boundary.
    const error = (x: number, c: number) => {
      let sum = 0;
      for (let y = 0; y < height; y++) sum += pixel(decoded, x, y)[c]! - image.data[(y * width + x) * 4 + c]!;
      return sum / height;
    };
    const jump = (x: number) => Math.max(...[0, 1, 2].map((c) => Math.abs(error(x, c) - error(x - 1, c))));
    const inside = Array.from({ length: width - 2 }, (_, i) => i + 1).filter((x) => !boundaries.has(x));
    const worstInside = Math.max(...inside.map(jump));
    for (const x of boundaries) expect(jump(x), `column ${x}`).toBeLessThanOrEqual(worstInside + 0.5);
  }, 30_000);

  it("keeps an RGB ICC profile from each input (a JPEG's APP2 chunks joined); drops one for another colour model", async () => {
    const sha256 = async (bytes: Uint8Array) =>
      [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
        .map((b) => b.toString(16).padStart(2, '0'))
        .join('');
    const image = quadrants(64, 48);
    const rgb = iccProfile('RGB ', 3000);
    const rgbPixels = new Uint8Array(64 * 48 * 3).map((_, i) => image.data[Math.floor(i / 3) * 4 + (i % 3)]!);
    const jpegWith = (profile: Uint8Array) =>
      encodePixelsJpeg(rgbPixels, 64, 48, 3, {
        quality: 90,
        markers: [0, 1].map((i) => ({
          code: 0xe2,
          data: cat(ascii('ICC_PROFILE\0'), Uint8Array.of(i + 1, 2), profile.subarray(i * 1500, (i + 1) * 1500)),
        })),
      });
    const pngWith = async (profile: Uint8Array) =>
      makePng({
        width: 64,
        height: 48,
        colourType: 2,
        bitDepth: 8,
        before: [{ type: 'iCCP', data: cat(ascii('test\0\0'), await zlib(profile)) }],
      });
    const webpWith = (profile: Uint8Array) => withMetadata(lossyWebp(image), 64, 48, { icc: profile });
    for (const [filename, withProfile] of [
      ['in.jpg', jpegWith],
      ['in.png', pngWith],
      ['in.webp', webpWith],
    ] as const) {
      const kept = await avifOf({ image: await withProfile(rgb), filename });
      expect(kept.decoded.iccSha256, filename).toBe(await sha256(rgb));
      const dropped = await avifOf({ image: await withProfile(iccProfile('GRAY', 3000)), filename });
      expect(dropped.decoded.iccSha256, filename).toBe('');
    }
  });

  describe('screen content: intra block copy where the plan counts its hash', () => {
    const MiB = 1024 * 1024;
    /**
     * A screenshot's kind of picture, small: lines of bitmap "words" (glyphs of 5 × 7 cells at 2 pixels,
     * the same 12 glyphs over and over, as text repeats its letters) on a light background, mostly flat
     * as a page is (AVIF_SCREEN_FLAT_SHARE): two-colour, a line every 40 pixels; or `smooth`ed as a browser
     * draws text (a 5 × 5 box filter: up to 26 shades at the edges, so that no 16 × 16 block has the 2–4
     * colours libaom's own detection looks for), a line every 48.
     */
    function textPicture(width: number, height: number, smooth = false): RgbaImage {
      const ink = new Uint8Array(width * height);
      let seed = 7;
      const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 16;
      const glyphs = Array.from({ length: 12 }, () => Array.from({ length: 35 }, () => next() % 3 === 0));
      for (let top = 8; top + 14 <= height; top += smooth ? 48 : 40) {
        let x = 8;
        while (x + 12 <= width - 8) {
          const glyph = glyphs[next() % glyphs.length]!;
          for (let gy = 0; gy < 14; gy++)
            for (let gx = 0; gx < 10; gx++)
              if (glyph[Math.floor(gy / 2) * 5 + Math.floor(gx / 2)]) ink[(top + gy) * width + x + gx] = 1;
          x += next() % 6 === 0 ? 20 : 12;
        }
      }
      const data = new Uint8Array(width * height * 4);
      for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++) {
          // Coverage of the pixel out of `area`: the bitmap's 0 or 1, or the ink under a 5 × 5 box.
          const radius = smooth ? 2 : 0;
          const area = (2 * radius + 1) ** 2;
          let cover = 0;
          for (let dy = -radius; dy <= radius; dy++)
            for (let dx = -radius; dx <= radius; dx++) cover += ink[(y + dy) * width + x + dx] ? 1 : 0;
          const mix = (paper: number, dark: number) => Math.round(paper + ((dark - paper) * cover) / area);
          data.set([mix(246, 36), mix(248, 41), mix(250, 47), 255], (y * width + x) * 4);
        }
      return { data, width, height };
    }
    const png = pngOf(textPicture(320, 240));
    const planned = (budget: number, image = png) =>
      plan('png', readHeader('png', image), image.length, { format: 'avif', quality: 80 }, budget);
    const convert = (image: Uint8Array, budgetMb: number) =>
      compressCall(
        pro.key,
        { image, filename: 'text.png', format: 'avif' },
        { env: { MEMORY_BUDGET_MB: String(budgetMb) } },
      );
    /** The AVIF's bytes in a budget that fits only the encode without the hash, and in the default one. */
    async function tightAndRoomy(image: Uint8Array): Promise<{ tight: number; roomy: number }> {
      // A budget of 0 fits nothing: the plan without the hash, whose estimate sets the tight budget.
      const tightMb = Math.ceil(planned(0, image).estimate / MiB);
      expect(planned(tightMb * MiB, image).avifIntrabc ?? false).toBe(false);
      const tight = await convert(image, tightMb);
      const tightBody = await bodyBytes(tight);
      expect(tight.status, new TextDecoder().decode(tightBody.subarray(0, 300))).toBe(200);
      const roomy = await convert(image, 100);
      const roomyBody = await bodyBytes(roomy);
      expect(roomy.status).toBe(200);
      return { tight: tightBody.length, roomy: roomyBody.length };
    }

    it('a text picture as PNG: the plan counts the hash and the engines stay within it', async () => {
      const withHash = planned(Infinity);
      expect(withHash.avifIntrabc).toBe(true);
      const budgetMb = Math.ceil(withHash.estimate / MiB);
      expect(planned(budgetMb * MiB).avifIntrabc).toBe(true);
      resetWasmInstances();
      const res = await convert(png, budgetMb);
      const body = await bodyBytes(res);
      expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
      expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(withHash.estimate);
      const decoded = await decodeAvif(body);
      expect([decoded.width, decoded.height]).toEqual([320, 240]);
    });

    it('with the hash it is smaller than in a budget that fits only the encode without it (still 200)', async () => {
      const { tight, roomy } = await tightAndRoomy(png);
      // Intra block copy codes a repeated glyph as a copy of an earlier one.
      expect(roomy).toBeLessThan(tight * 0.9);
    });

    it('smoothed text, which libaom alone does not take for screen content, is coded as screen content too', async () => {
      const { tight, roomy } = await tightAndRoomy(pngOf(textPicture(320, 240, true)));
      expect(roomy).toBeLessThan(tight * 0.8);
    });
  });

  it('a picture a few rows high and 40,000 wide: 422 before decoding, naming a width that then answers 200', async () => {
    // One cell (a grid's cells are 64 × 64 at least), whose frame buffers' borders cost libaom about
    // 3.2 KB a column (AVIF_THIN_CELL_BYTES_PER_COLUMN): counted only by the cell's pixels, this was
    // admitted and ran out of memory, 503 "retry" for a size no retry could fit.
    const image = jpegOf(photo(40_000, 16), 90);
    const res = await compressCall(pro.key, { image, format: 'avif' });
    const body = (await res.json()) as { error: { code: string; details: { max_width: number } } };
    expect(res.status, JSON.stringify(body)).toBe(422);
    expect(body.error.code).toBe('image_too_large');
    const { max_width } = body.error.details;
    expect(max_width).toBeGreaterThan(10_000);
    // A width the parameter takes (at most 16,384), though the picture itself is wider.
    expect(max_width).toBeLessThanOrEqual(16_384);
    expect(max_width).toBeLessThan(40_000);
    const fits = await compressCall(pro.key, { image, format: 'avif', width: String(max_width) });
    expect(fits.status, await fits.clone().text()).toBe(200);
    expect(fits.headers.get('content-type')).toBe('image/avif');
  }, 30_000);

  it('free keys get the same 403 plan_upgrade_required as for WebP', async () => {
    for (const [format, name] of [
      ['webp', 'WebP'],
      ['avif', 'AVIF'],
    ] as const) {
      const res = await compressCall(free.key, { image: jpegOf(quadrants(32, 32), 90), format });
      expect(res.status).toBe(403);
      const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
      expect(error).toMatchObject({
        code: 'plan_upgrade_required',
        param: 'format',
        message: `${name} output needs the pro tier; the free tier writes JPEG and PNG`,
      });
    }
  });
});
