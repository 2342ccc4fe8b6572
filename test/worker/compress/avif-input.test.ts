// POST /api/v1/compress with AVIF input, as a caller sees it: AVIFs written by our own encoder (8-bit 4:2:0,
// alpha, a grid of cells) and small fixtures made by Debian's avifenc for what it cannot write (10- and
// 12-bit, 4:2:2, monochrome, irot/imir, clap, Display P3 and PQ by nclx, an ICC profile, an EXIF orientation
// beside irot; test/fixtures/avif/README.md) come out at the right size, upright by irot alone, in the colours
// Debian's avifdec decodes them to; P3 stays P3, a profile is carried; an nclx it cannot convert is 415;
// broken files are 4xx, never 500; format=json describes an AVIF. Tiny images, few requests.
import { beforeAll, describe, expect, it } from 'vitest';
import tenBit from '../../fixtures/avif/10bit-420.avif';
import twelveBit from '../../fixtures/avif/12bit-422.avif';
import bt2020 from '../../fixtures/avif/bt2020-sdr.avif';
import clap from '../../fixtures/avif/clap.avif';
import iccP3 from '../../fixtures/avif/icc-p3.avif';
import irot3exif8 from '../../fixtures/avif/irot3-exif8.avif';
import irot1imir1 from '../../fixtures/avif/irot1-imir1.avif';
import irot3 from '../../fixtures/avif/irot3.avif';
import mono from '../../fixtures/avif/mono.avif';
import p3 from '../../fixtures/avif/p3-nclx.avif';
import gradient10 from '../../fixtures/avif/gradient-10bit.avif';
import pq from '../../fixtures/avif/pq.avif';
import pqPatches from '../../fixtures/avif/pq-patches.avif';
import pqPatchesClli from '../../fixtures/avif/pq-patches-clli4000.avif';
import heicGradient10 from '../../fixtures/heic/gradient-10bit.heic';
import heicHlg from '../../fixtures/heic/hlg.heic';
import hlgPatches from '../../fixtures/avif/hlg-patches.avif';
import heicPq from '../../fixtures/heic/pq.heic';
import sequence from '../../fixtures/avif/sequence.avif';
import { DISPLAY_P3_PROFILE } from '../../../src/compress/avif-input/display-p3.ts';
import { signedUp } from '../console-helpers.ts';
import { chunksOf as pngChunks } from '../png-fixtures.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { mutation, withNclx } from '../mutate.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';
import {
  bodyBytes,
  compressCall,
  decodeAny,
  form,
  near,
  pixel,
  pngOf,
  QUADRANT_COLOURS,
  quadrants,
  type Parts,
  type Rgba,
} from '../image-fixtures.ts';

let pro: TestKey;
let free: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  free = await makeKey({ image: 'free' });
});

const bytesOf = (data: ArrayBuffer): Uint8Array => new Uint8Array(data);

async function send(avif: Uint8Array, parts: Parts = {}, key = pro, env?: Record<string, unknown>) {
  const res = await compressCall(key.key, { image: avif, filename: 'photo.avif', ...parts }, env ? { env } : {});
  const body = await bodyBytes(res);
  return { res, body, text: () => new TextDecoder().decode(body) };
}

/** The request's output decoded, after checking it answered 200. */
async function decoded(avif: Uint8Array, parts: Parts = { format: 'png' }) {
  const { res, body, text } = await send(avif, parts);
  expect(res.status, text()).toBe(200);
  return { res, image: decodeAny(body), body };
}

/** Our encoder's AVIF of `png` (pro: AVIF output). */
async function ourAvif(png: Uint8Array, parts: Parts = {}): Promise<Uint8Array> {
  const res = await compressCall(pro.key, { image: png, filename: 'in.png', format: 'avif', quality: 90, ...parts });
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body)).toBe(200);
  return body;
}

/** The four quadrant centres of a width × height image, top-left, top-right, bottom-left, bottom-right. */
const centres = (w: number, h: number): [number, number][] => [
  [Math.floor(w / 4), Math.floor(h / 4)],
  [Math.floor((3 * w) / 4), Math.floor(h / 4)],
  [Math.floor(w / 4), Math.floor((3 * h) / 4)],
  [Math.floor((3 * w) / 4), Math.floor((3 * h) / 4)],
];

function expectQuadrants(image: { width: number; height: number; data: Uint8Array }, colours: Rgba[], tolerance = 12) {
  const got = centres(image.width, image.height).map(([x, y]) => pixel(image, x, y));
  for (const [i, colour] of got.entries())
    expect(near(colour, colours[i]!, tolerance), `quadrant ${i}: ${colour} vs ${colours[i]}`).toBe(true);
}

const { tl: R, tr: G, bl: B, br: W } = QUADRANT_COLOURS;

/** The Orientation (0x0112) of a JPEG's APP1 Exif segment, or null without one. */
function exifOrientation(jpeg: Uint8Array): number | null {
  const exif = jpeg.findIndex((_, i) => String.fromCharCode(...jpeg.subarray(i, i + 6)) === 'Exif\0\0');
  if (exif < 0) return null;
  const tiff = exif + 6;
  const view = new DataView(jpeg.buffer, jpeg.byteOffset);
  const little = jpeg[tiff] === 0x49;
  const ifd = tiff + view.getUint32(tiff + 4, little);
  for (let i = 0, n = view.getUint16(ifd, little); i < n; i++) {
    const entry = ifd + 2 + i * 12;
    if (view.getUint16(entry, little) === 0x0112) return view.getUint16(entry + 8, little);
  }
  return null;
}

describe('AVIF from our own encoder', () => {
  it('8-bit 4:2:0 → PNG and JPEG: the size and the colours; format=keep stays AVIF on pro, JPEG on free', async () => {
    const avif = await ourAvif(pngOf(quadrants(64, 48)));
    const png = await decoded(avif);
    expect(png.res.headers.get('content-type')).toBe('image/png');
    expect(png.res.headers.get('x-frames')).toBe('1/1');
    expect([png.image.width, png.image.height]).toEqual([64, 48]);
    expectQuadrants(png.image, [R, G, B, W]);
    const jpeg = await decoded(avif, { format: 'jpeg', width: 32 });
    expect([jpeg.image.width, jpeg.image.height]).toEqual([32, 24]);
    expectQuadrants(jpeg.image, [R, G, B, W], 20);
    const kept = await send(avif, { format: 'keep' });
    expect(kept.res.headers.get('content-type')).toBe('image/avif');
    const keptFree = await send(avif, { format: 'keep' }, free);
    expect(keptFree.res.status, keptFree.text()).toBe(200);
    expect(keptFree.res.headers.get('content-type')).toBe('image/jpeg');
    // Encoding AVIF twice (the fixture and format=keep) on a loaded machine; the first also instantiates both modules.
  }, 30_000);

  it('a grid of cells with alpha (301×81: two cells, its odd size a clean aperture) → PNG: whole, alpha kept', async () => {
    const source = quadrants(301, 81);
    // The right half transparent: alpha goes through the grid's alpha cells.
    for (let y = 0; y < 81; y++) for (let x = 150; x < 301; x++) source.data[(y * 301 + x) * 4 + 3] = 0;
    const avif = await ourAvif(pngOf(source));
    const { image } = await decoded(avif);
    expect([image.width, image.height]).toEqual([301, 81]);
    expect(near(pixel(image, 40, 20), R)).toBe(true);
    expect(near(pixel(image, 40, 60), B)).toBe(true);
    expect(pixel(image, 220, 20)[3]).toBeLessThan(8);
    expect(pixel(image, 220, 60)[3]).toBeLessThan(8);
  }, 20_000);
});

describe('AVIF fixtures made by avifenc (within a tolerance of avifdec)', () => {
  it('10-bit 4:2:0 and 12-bit 4:2:2 reduce to 8 bits; monochrome stays grey', async () => {
    for (const file of [tenBit, twelveBit]) {
      const { image } = await decoded(bytesOf(file));
      expect([image.width, image.height]).toEqual([64, 48]);
      // avifdec -d 8: (255,0,0) (0,255,0) (0,0,255) (255,255,255) at the quadrant centres.
      expectQuadrants(image, [R, G, B, W], 3);
    }
    const { image } = await decoded(bytesOf(mono));
    // avifdec -d 8 at the corners and the centre.
    const reference: [number, number, number][] = [
      [0, 0, 136],
      [63, 0, 143],
      [0, 47, 162],
      [63, 47, 169],
      [32, 24, 152],
    ];
    for (const [x, y, grey] of reference) expect(near(pixel(image, x, y), [grey, grey, grey, 255], 2)).toBe(true);
  });

  it('irot and imir decide the orientation; clap crops', async () => {
    // Stored red, green / blue, white; turned 90° anticlockwise then mirrored left to right (EXIF 7).
    const turnedMirrored = await decoded(bytesOf(irot1imir1));
    expect([turnedMirrored.image.width, turnedMirrored.image.height]).toEqual([48, 64]);
    expectQuadrants(turnedMirrored.image, [W, G, B, R]);
    // Turned 270° anticlockwise (90° clockwise).
    const turned = await decoded(bytesOf(irot3));
    expect([turned.image.width, turned.image.height]).toEqual([48, 64]);
    expectQuadrants(turned.image, [B, R, W, G]);
    // clap: 40×30 from (8, 4): the quadrants meet at (24, 20) of the crop.
    const cropped = await decoded(bytesOf(clap));
    expect([cropped.image.width, cropped.image.height]).toEqual([40, 30]);
    for (const [x, y, colour] of [
      [12, 10, R],
      [32, 10, G],
      [12, 25, B],
      [32, 25, W],
    ] as const)
      expect(near(pixel(cropped.image, x, y), colour)).toBe(true);
  });

  it('an EXIF orientation that disagrees with irot is informational: irot decides, and metadata=keep resets it to 1', async () => {
    // irot 3 (90° clockwise) beside EXIF orientation 8 (90° anticlockwise): turned by irot alone. Both
    // applied would give the stored 64×48 turned 180°; EXIF alone, red at the bottom left.
    const turned = await decoded(bytesOf(irot3exif8));
    expect([turned.image.width, turned.image.height]).toEqual([48, 64]);
    expectQuadrants(turned.image, [B, R, W, G]);
    expect(near(pixel(turned.image, 0, 0), B), `top-left ${pixel(turned.image, 0, 0)}`).toBe(true);
    // The same file with irot 0 (no turn) beside EXIF 8: as stored.
    const irot0exif8 = bytesOf(irot3exif8).slice();
    const irot = irot0exif8.findIndex((_, i) => String.fromCharCode(...irot0exif8.subarray(i, i + 4)) === 'irot');
    irot0exif8[irot + 4] = 0;
    const stored = await decoded(irot0exif8);
    expect([stored.image.width, stored.image.height]).toEqual([64, 48]);
    expectQuadrants(stored.image, [R, G, B, W]);
    // The kept EXIF says 1: a viewer that reads it does not turn the upright output again.
    for (const [file, what] of [
      [bytesOf(irot3exif8), 'irot 3'],
      [irot0exif8, 'irot 0'],
    ] as const) {
      const kept = await decoded(file, { format: 'jpeg', metadata: 'keep' });
      expect(exifOrientation(kept.body), what).toBe(1);
    }
  });

  it('an ICC profile goes to the output byte for byte, the pixels unchanged (not converted, not read as sRGB)', async () => {
    // icc-p3.avif: the gradient (200, 120 + y, 40 + x) with a Display P3 profile renamed "Carried P3"
    // (README.md): not the service's own profile, so finding it in the output shows it was carried.
    const carried = new Uint8Array(DISPLAY_P3_PROFILE);
    const name = (text: string) => [...text].flatMap((c) => [0, c.charCodeAt(0)]);
    const at = carried.findIndex((_, i) => name('Display P3').every((v, j) => carried[i + j] === v));
    carried.set(name('Carried P3'), at);
    const { image, body } = await decoded(bytesOf(iccP3));
    // avifdec -d 8 at these points; converted from P3 to sRGB the red would rise by about 14 and the blue
    // fall by about 40 (as anim-input.test.ts computes for the P3 sequence).
    for (const [x, y, r, g, b] of [
      [0, 0, 200, 120, 41],
      [63, 47, 200, 166, 104],
      [32, 24, 201, 144, 74],
    ] as const)
      expect(near(pixel(image, x, y), [r, g, b, 255], 4), `(${x}, ${y}): ${pixel(image, x, y)}`).toBe(true);
    const iccp = pngChunks(body).find((c) => c.type === 'iCCP');
    expect(iccp, 'an iCCP chunk').toBeDefined();
    const deflated = iccp!.data.subarray(iccp!.data.indexOf(0) + 2);
    const stream = new Blob([deflated]).stream().pipeThrough(new DecompressionStream('deflate'));
    expect(new Uint8Array(await new Response(stream).arrayBuffer())).toEqual(carried);
  });

  it('transformed: fit=cover on a turned AVIF crops the upright picture; rotate=90 turns it again', async () => {
    const cover = await decoded(bytesOf(irot3), { format: 'png', fit: 'cover', width: 24, height: 24 });
    expect([cover.image.width, cover.image.height]).toEqual([24, 24]);
    // Upright 48×64 (blue, red / white, green), its middle 48×48 scaled to 24×24.
    expectQuadrants(cover.image, [B, R, W, G], 16);
    const turned = await decoded(bytesOf(irot3), { format: 'png', rotate: 90 });
    expect([turned.image.width, turned.image.height]).toEqual([64, 48]);
    expectQuadrants(turned.image, [W, B, G, R]);
  });

  it('Display P3 by nclx stays P3: the pixels as avifdec reads them, with a Display P3 profile', async () => {
    const { image, body } = await decoded(bytesOf(p3), { format: 'jpeg', quality: 95 });
    for (const [x, y, r, g, b] of [
      [0, 0, 200, 121, 41],
      [63, 47, 200, 165, 101],
      [32, 24, 199, 143, 72],
    ] as const)
      expect(near(pixel(image, x, y), [r, g, b, 255], 6), `${pixel(image, x, y)}`).toBe(true);
    // The profile's description, UTF-16 in its mluc tag, inside the JPEG's APP2 ICC segment.
    const name = [...'Display P3'].flatMap((c) => [0, c.charCodeAt(0)]);
    const at = body.findIndex((_, i) => name.every((v, j) => body[i + j] === v));
    expect(at).toBeGreaterThan(0);
  });

  it('BT.2020 primaries in SDR (nclx 9/1) are converted to sRGB, with no profile: not read as sRGB', async () => {
    // bt2020-sdr.avif: a flat colour of 10-bit codes (602, 481, 401), lossless (README.md). Expected: the
    // sRGB curve to linear light (the decoder takes SDR transfers by it), BT.2087's BT.2020 → BT.709
    // matrix, sRGB-encoded; about (167, 116, 96). Read as sRGB the codes would stay (150, 120, 100).
    const lin = (v: number) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const enc = (v: number) => 255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055);
    const [r, g, b] = [602, 481, 401].map((code) => lin(code / 1023)) as [number, number, number];
    const expected = [
      enc(1.6605 * r - 0.5876 * g - 0.0728 * b),
      enc(-0.1246 * r + 1.1329 * g - 0.0083 * b),
      enc(-0.0182 * r - 0.1006 * g + 1.1187 * b),
    ];
    const { image, body } = await decoded(bytesOf(bt2020));
    // Each channel's mean over the picture (the 10 bits dithered to 8).
    for (let c = 0; c < 3; c++) {
      let sum = 0;
      for (let i = c; i < image.data.length; i += 4) sum += image.data[i]!;
      const mean = sum / (image.width * image.height);
      expect(Math.abs(mean - expected[c]!), `channel ${c}: ${mean} vs ${expected[c]}`).toBeLessThan(0.75);
    }
    expect(new TextDecoder('latin1').decode(body).includes('iCCP')).toBe(false);
  });

  it('a sequence gives its first frame, with X-Frames: 1/2', async () => {
    const { res, image } = await decoded(bytesOf(sequence));
    expect(res.headers.get('x-frames')).toBe('1/2');
    expect([image.width, image.height]).toEqual([64, 48]);
    expectQuadrants(image, [R, G, B, W]);
  });

  it('PQ (HDR) is tone-mapped to sRGB, not passed through as code values', async () => {
    const { image, body } = await decoded(bytesOf(pq));
    // The code values are (200, 120 + y, 40 + x) / 255 of PQ: about 2,000 nits of red, far brighter than
    // reference white; read as sRGB they would be an orange.
    const naive: Rgba = [200, 120, 40, 255];
    expect(near(pixel(image, 0, 0), naive, 40)).toBe(false);
    expect(pixel(image, 0, 0)[0]).toBe(255);
    // sRGB output: no profile is attached.
    expect(new TextDecoder('latin1').decode(body).includes('iCCP')).toBe(false);
  });
});

describe('AVIF and HEIC share one colour method (wasm/src/sr_hdr.h)', () => {
  /** The same synthetic picture as an AVIF and as a HEIC (both 10-bit lossless), decoded to PNG. */
  async function both(avif: ArrayBuffer, heic: ArrayBuffer) {
    const a = (await decoded(bytesOf(avif))).image;
    const res = await compressCall(
      pro.key,
      { image: bytesOf(heic), filename: 'photo.heic', format: 'png' },
      { env: { HEIC_INPUT: 'on' } },
    );
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body)).toBe(200);
    return { a, h: decodeAny(body) };
  }

  it('PQ: grey patches of 0 to 4,000 nits come out as the HEIC decoder gives them (203 nits at sRGB 229)', async () => {
    const { a, h } = await both(pqPatches, heicPq);
    expect([a.width, a.height]).toEqual([h.width, h.height]);
    // Each 16-pixel grey patch's mean across the top half (greys survive the HEIC's YCbCr exactly; its
    // saturated red below does not, so only that it stays red is compared).
    for (let patch = 0; patch < 8; patch++) {
      const mean = (img: typeof a) => {
        let sum = 0;
        for (let x = patch * 16 + 4; x < patch * 16 + 12; x++) sum += pixel(img, x, 16)[1]!;
        return sum / 8;
      };
      expect(Math.abs(mean(a) - mean(h)), `patch ${patch}: ${mean(a)} vs ${mean(h)}`).toBeLessThan(1.5);
    }
    expect(Math.abs(pixel(a, 3 * 16 + 8, 16)[0]! - 229)).toBeLessThanOrEqual(2);
    const [r, g, b] = pixel(a, 3 * 16 + 8, 48);
    expect(r).toBe(255);
    expect(Math.max(g!, b!)).toBeLessThan(160);
  });

  it('HLG: grey patches of signal 0.1 to 1.0 come out as the HEIC decoder gives them (0.75, reference white, at sRGB 229)', async () => {
    const { a, h } = await both(hlgPatches, heicHlg);
    expect([a.width, a.height]).toEqual([h.width, h.height]);
    const mean = (img: typeof a, patch: number) => {
      let sum = 0;
      for (let x = patch * 16 + 4; x < patch * 16 + 12; x++) sum += pixel(img, x, 16)[1]!;
      return sum / 8;
    };
    for (let patch = 0; patch < 8; patch++)
      expect(
        Math.abs(mean(a, patch) - mean(h, patch)),
        `patch ${patch}: ${mean(a, patch)} vs ${mean(h, patch)}`,
      ).toBeLessThan(1.5);
    // BT.2100's OOTF for a 1,000-nit display puts signal 0.75 at 203 nits (heic-input.test.ts has the rest).
    expect(Math.abs(mean(a, 3) - 229)).toBeLessThan(1.5);
    // Read as SDR code values they would be 191 and 128.
    expect(Math.abs(mean(a, 2) - 137)).toBeLessThan(1.5);
  });

  it("PQ with a content light level ('clli', MaxCLL 4,000 nits): tone-mapped from that peak, so 1,000 nits is no longer white", async () => {
    // Patches of 0, 50, 100, 203, 400, 600, 1,000 and 4,000 nits (16 pixels each, top half).
    const mean = (img: { width: number; height: number; data: Uint8Array }, patch: number) => {
      let sum = 0;
      for (let x = patch * 16 + 4; x < patch * 16 + 12; x++) sum += pixel(img, x, 16)[1]!;
      return sum / 8;
    };
    const assumed = (await decoded(bytesOf(pqPatches))).image;
    const told = (await decoded(bytesOf(pqPatchesClli))).image;
    // Without one, 1,000 nits is the peak: 1,000 and 4,000 both white.
    expect([mean(assumed, 6), mean(assumed, 7)]).toEqual([255, 255]);
    // With MaxCLL 4,000 the curve keeps them apart, brightest white, and the midtones a little darker.
    expect(mean(told, 7)).toBeGreaterThanOrEqual(254);
    expect(mean(told, 6)).toBeLessThan(252);
    expect(mean(told, 5)).toBeLessThan(mean(told, 6));
    expect(mean(told, 3)).toBeLessThan(mean(assumed, 3));
  });

  it('a 10-bit grey ramp is dithered, not banded: every code’s mean within 0.25 of its 8-bit value', async () => {
    const { a } = await both(gradient10, heicGradient10);
    // The ramp's codes are 400 + x/4 (10 bits): 4 columns a code; a column's mean over the rows is the code × 255/1023.
    let distinct = 0;
    let previous = -1;
    for (let code = 0; code < 64; code++) {
      let sum = 0;
      for (let x = code * 4; x < code * 4 + 4; x++) for (let y = 0; y < a.height; y++) sum += pixel(a, x, y)[0]!;
      const mean = sum / (4 * a.height);
      expect(Math.abs(mean - ((400 + code) * 255) / 1023), `code ${400 + code}`).toBeLessThan(0.25);
      if (mean > previous) distinct++;
      previous = mean;
    }
    expect(distinct).toBe(64);
  });
});

describe('AVIF refused or described', () => {
  it('truncated, corrupt or cut AV1 data: 422, never 500; HEIC: 415', async () => {
    const good = bytesOf(tenBit);
    const truncated = good.subarray(0, good.length - 40);
    const corrupt = good.slice();
    corrupt.fill(0xff, corrupt.length - 60, corrupt.length - 20);
    const noMeta = good.subarray(0, 32);
    for (const [what, file] of [
      ['truncated', truncated],
      ['corrupt AV1', corrupt],
      ['cut after ftyp', noMeta],
    ] as const) {
      const { res, text } = await send(file, { format: 'png' });
      expect(res.status, `${what}: ${text()}`).toBe(422);
      expect(JSON.parse(text()).error).toMatchObject({ code: 'unprocessable_image', param: 'image' });
    }
    // Boxes declaring 16×12 over a 64×48 AV1 frame: refused before dav1d allocates the larger frame.
    const liar = good.slice();
    const ispe = liar.findIndex((_, i) => String.fromCharCode(...liar.subarray(i, i + 4)) === 'ispe');
    new DataView(liar.buffer).setUint32(ispe + 8, 16);
    new DataView(liar.buffer).setUint32(ispe + 12, 12);
    const lied = await send(liar, { format: 'png' });
    expect(lied.res.status, lied.text()).toBe(422);
    expect(JSON.parse(lied.text()).error.code).toBe('unprocessable_image');
    const heic = good.slice();
    heic.set(
      [...'heic'].map((c) => c.charCodeAt(0)),
      8,
    );
    for (let at = 16; at + 4 <= 8 + 16; at += 4)
      heic.set(
        [...'mif1'].map((c) => c.charCodeAt(0)),
        at,
      );
    const { res, text } = await send(heic, { format: 'png' });
    expect(res.status, text()).toBe(415);
    expect(JSON.parse(text()).error.message).toContain('HEIC');
  });

  it('colour primaries or a transfer it does not support (nclx): 415 naming the value, not reinterpreted', async () => {
    // p3-nclx.avif's nclx (12/13/1) with primaries 5 (BT.601 625-line) or transfer 4 (a gamma of 2.2):
    // neither is converted by the decoder (sr_avifdec.c colour_handling), so neither is passed as sRGB.
    for (const [field, value, message] of [
      [0, 5, 'its colour primaries (nclx 5) are not supported'],
      [2, 4, 'its transfer characteristics (nclx 4) are not supported'],
    ] as const) {
      const { res, text } = await send(withNclx(bytesOf(p3), field, value), { format: 'png' });
      expect(res.status, text()).toBe(415);
      const { error } = JSON.parse(text());
      expect(error).toMatchObject({ code: 'unsupported_media_type', param: 'image' });
      expect(error.message).toContain(message);
    }
  });

  it('a picture and a sequence with a few bytes changed (10 each, the same every run): 200, 415 or 422, never 500', async () => {
    // A key of their own: a key's 31st refusal in a minute is answered 429.
    const key = await makeKey({ image: 'pro' });
    for (const [name, file, format] of [
      ['10bit-420.avif', tenBit, 'png'],
      ['sequence.avif', sequence, 'webp'],
    ] as const) {
      for (let seed = 1; seed <= 10; seed++) {
        const image = mutation(bytesOf(file), seed * 7919 + name.length);
        const res = await compressCall(key.key, { image, filename: 'photo.avif', format });
        const text = new TextDecoder().decode(await bodyBytes(res));
        expect([200, 415, 422], `${name}, mutation ${seed}: ${text}`).toContain(res.status);
        if (res.status !== 200)
          expect(JSON.parse(text).error.code, `${name}, mutation ${seed}`).toMatch(
            /^(unprocessable_image|unsupported_media_type|image_too_large)$/,
          );
      }
    }
  });

  it("Try it's planner reads an AVIF's size from its first bytes (the picture's data cut off)", async () => {
    const { browser, csrf } = await signedUp();
    const file = bytesOf(irot3);
    // ftyp and meta whole (the first 284 bytes), mdat cut short.
    const head = file.subarray(0, file.length - 30);
    const res = await browser.fetch('/api/v1/console/compress/plan', {
      method: 'POST',
      headers: { origin: 'https://api.shrinkray.test', 'x-csrf-token': csrf },
      body: form({ filename: 'try.avif', image: head, size: String(file.length), format: 'png' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({
      verdict: 'accepted',
      output: { width: 48, height: 64 },
    });
  });

  it('a signed image URL with an AVIF source: upright, kept as AVIF on pro, JPEG on free', async () => {
    const url = `${ORIGIN}/img/irot3.avif?group=${crypto.randomUUID()}`;
    const pro = await getImage(await signed(await signingAccount('pro'), 'f=png', url));
    expect(pro.status, await pro.clone().text()).toBe(200);
    const image = decodeAny(await bodyBytes(pro));
    expect([image.width, image.height]).toEqual([48, 64]);
    const kept = await getImage(await signed(await signingAccount('pro'), '_', url));
    expect(kept.headers.get('content-type')).toBe('image/avif');
    const free = await getImage(await signed(await signingAccount('free'), '_', url));
    expect(free.status, await free.clone().text()).toBe(200);
    expect(free.headers.get('content-type')).toBe('image/jpeg');
  }, 20_000);

  it('too large for the memory budget: 422 image_too_large', async () => {
    const { res, text } = await send(bytesOf(tenBit), { format: 'png' }, pro, { MEMORY_BUDGET_MB: '5' });
    expect(res.status, text()).toBe(422);
    const { error } = JSON.parse(text());
    expect(error.code).toBe('image_too_large');
    expect(error.message).toContain('AVIF');
  });

  it('format=json describes an AVIF: size after irot, bit depth, no alpha', async () => {
    const { res, text } = await send(bytesOf(irot3), { format: 'json' });
    expect(res.status, text()).toBe(200);
    expect(JSON.parse(text())).toMatchObject({ format: 'avif', width: 48, height: 64, bit_depth: 8, has_alpha: false });
    const ten = await send(bytesOf(tenBit), { format: 'json' });
    expect(JSON.parse(ten.text())).toMatchObject({ format: 'avif', bit_depth: 10, frames: 1 });
  });
});
