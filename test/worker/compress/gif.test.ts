// POST /api/v1/compress with GIF input, as a caller sees it: the first frame's pixels in PNG (exact, alpha
// where the transparency index is and outside the frame's rectangle), JPEG (flattened onto white) and
// WebP; interlaced frames and local colour tables; an animated GIF answers its first frame with
// X-Frames: 1/N; `format=keep` gives PNG; malformed or truncated LZW data, and a GIF over a limit (its
// screen, its frames), are refused with 422 before anything is encoded. Small images: a few requests.
import { beforeAll, describe, expect, it } from 'vitest';
import { readHeader } from '../../../src/compress/header.ts';
import { MAX_GIF_FRAMES } from '../../../src/compress/limits.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import { decodeAvif } from '../avif-decode.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';
import { bodyBytes, compressCall, decodeAny, type Parts } from '../image-fixtures.ts';
import {
  expectedFrames,
  indicesOf,
  makeGif,
  spreadPalette,
  subBlocks,
  type GifSpec,
  type Rgb,
} from '../gif-fixtures.ts';

let pro: TestKey;
let free: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  free = await makeKey({ image: 'free' });
});

async function send(gif: Uint8Array, parts: Parts = {}, key = pro) {
  const res = await compressCall(key.key, { image: gif, filename: 'anim.gif', ...parts });
  const body = await bodyBytes(res);
  return { res, body, text: () => new TextDecoder().decode(body) };
}

async function refusal(gif: Uint8Array, status: number, code: string): Promise<string> {
  const { res, text } = await send(gif, { format: 'png' });
  expect(res.status, text()).toBe(status);
  const { error } = JSON.parse(text());
  expect(error.code).toBe(code);
  expect(error.param).toBe('image');
  return error.message as string;
}

/** Byte equality of two pixel buffers, failing with the first difference (and its pixel). */
function expectSamePixels(actual: Uint8Array, expected: Uint8Array, width: number): void {
  expect(actual.length).toBe(expected.length);
  const at = expected.findIndex((v, i) => actual[i] !== v);
  const where = at < 0 ? 'identical' : `pixel (${(at >> 2) % width}, ${Math.floor(at / 4 / width)})`;
  const got =
    at < 0
      ? ''
      : ` is ${[...actual.subarray(at & ~3, (at & ~3) + 4)]}, not ${[...expected.subarray(at & ~3, (at & ~3) + 4)]}`;
  expect(where + got).toBe('identical');
}

const [W, H] = [37, 23];
const PALETTE = spreadPalette(16);
/** A still GIF: 16 colours in bands and a diagonal, the whole screen one frame. */
const still = (extra: Partial<GifSpec['frames'][number]> = {}): GifSpec => ({
  width: W,
  height: H,
  palette: PALETTE,
  frames: [{ width: W, height: H, indices: indicesOf(W, H, (x, y) => (x === y ? 15 : ((x >> 2) + y) % 15)), ...extra }],
});

describe('a still GIF', () => {
  it('→ PNG: the pixels exactly, opaque, X-Frames 1/1, and format=keep is PNG', async () => {
    const spec = still();
    const { res, body, text } = await send(makeGif(spec), { format: 'keep' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="anim.png"');
    expect(res.headers.get('x-frames')).toBe('1/1');
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual([String(W), String(H)]);
    expectSamePixels(decodeAny(body).data, expectedFrames(spec)[0]!, W);
  });

  // The engine's WebAssembly is compiled on its first use in the isolate: seconds on a loaded machine.
  it('→ JPEG: the pixels, within the encoder’s error', async () => {
    const spec = still();
    const expected = expectedFrames(spec)[0]!;
    const jpeg = await send(makeGif(spec), { format: 'jpeg', quality: '95' });
    expect(jpeg.res.status, jpeg.text()).toBe(200);
    expect(jpeg.res.headers.get('content-type')).toBe('image/jpeg');
    const decoded = decodeAny(jpeg.body);
    expect([decoded.width, decoded.height]).toEqual([W, H]);
    let sum = 0;
    for (let i = 0; i < expected.length; i++) if (i % 4 !== 3) sum += Math.abs(decoded.data[i]! - expected[i]!);
    expect(sum / ((expected.length * 3) / 4)).toBeLessThan(8);
  }, 15_000);

  it('→ lossless WebP: the pixels exactly; keep on the free tier: PNG', async () => {
    const spec = still();
    const webp = await send(makeGif(spec), { format: 'webp', lossless: 'true' });
    expect(webp.res.status, webp.text()).toBe(200);
    expect(webp.res.headers.get('content-type')).toBe('image/webp');
    expectSamePixels(decodeAny(webp.body).data, expectedFrames(spec)[0]!, W);
    const kept = await send(makeGif(spec), { format: 'keep' }, free);
    expect(kept.res.headers.get('content-type')).toBe('image/png');
  }, 15_000);

  it('resized: the asked width, the proportions kept', async () => {
    const { res, text } = await send(makeGif(still()), { format: 'png', width: '18' });
    expect(res.status, text()).toBe(200);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['18', '11']);
  });

  it('transformed: fit=cover crops the first frame where gravity says, X-Crop-Box and X-Frames answered', async () => {
    const spec = still();
    const { res, body, text } = await send(makeGif(spec), { format: 'png', fit: 'cover', width: '23', height: '23' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-crop-box')).toBe('7,0,23,23');
    expect(res.headers.get('x-frames')).toBe('1/1');
    const frame = expectedFrames(spec)[0]!;
    const cropped = new Uint8Array(23 * 23 * 4);
    for (let y = 0; y < 23; y++) cropped.set(frame.subarray((y * W + 7) * 4, (y * W + 30) * 4), y * 23 * 4);
    expectSamePixels(decodeAny(body).data, cropped, 23);
  });

  it('interlaced: the rows in display order', async () => {
    const spec = still({ interlaced: true });
    const { res, body, text } = await send(makeGif(spec), { format: 'png' });
    expect(res.status, text()).toBe(200);
    expectSamePixels(decodeAny(body).data, expectedFrames(spec)[0]!, W);
  });

  it('a local colour table: its colours, not the global ones', async () => {
    const local: Rgb[] = PALETTE.map(([r, g, b]) => [255 - r, 255 - g, 255 - b]);
    const spec = still({ palette: local });
    const { res, body, text } = await send(makeGif(spec), { format: 'png' });
    expect(res.status, text()).toBe(200);
    const expected = expectedFrames(spec)[0]!;
    expect([...expected.subarray(0, 3)]).toEqual(local[15]); // (0, 0) is on the diagonal
    expectSamePixels(decodeAny(body).data, expected, W);
  });
});

describe('transparency', () => {
  it('→ PNG: alpha 0 at the transparency index; → JPEG: white there', async () => {
    const spec = still({ transparentIndex: 15 });
    const png = await send(makeGif(spec), { format: 'png' });
    expect(png.res.status, png.text()).toBe(200);
    const decoded = decodeAny(png.body);
    expect([...decoded.data.subarray(0, 4)]).toEqual([0, 0, 0, 0]); // (0, 0): index 15
    expect(decoded.data[4 + 3]).toBe(255);
    expectSamePixels(decoded.data, expectedFrames(spec)[0]!, W);
    const jpeg = await send(makeGif(spec), { format: 'jpeg', quality: '95' });
    expect(jpeg.res.status, jpeg.text()).toBe(200);
    const [r, g, b] = decodeAny(jpeg.body).data;
    expect(Math.min(r!, g!, b!)).toBeGreaterThan(230);
  });

  it('→ WebP: the alpha channel exactly (lossless), the colours where opaque', async () => {
    const spec = still({ transparentIndex: 15 });
    const { res, body, text } = await send(makeGif(spec), { format: 'webp', lossless: 'true' });
    expect(res.status, text()).toBe(200);
    const decoded = decodeAny(body).data;
    const expected = expectedFrames(spec)[0]!;
    // The colour under a fully transparent pixel is not kept by lossless WebP: only alpha is compared there.
    const visible = (data: Uint8Array) => data.map((v, i) => (data[i | 3] === 0 && (i & 3) !== 3 ? 0 : v));
    expect(decoded[3]).toBe(0);
    expectSamePixels(visible(decoded), visible(expected), W);
  }, 15_000);

  it('→ AVIF: with an alpha channel, transparent at the transparency index', async () => {
    const { res, body, text } = await send(makeGif(still({ transparentIndex: 15 })), { format: 'avif' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/avif');
    const decoded = await decodeAvif(body);
    expect([decoded.width, decoded.height, decoded.hasAlpha]).toEqual([W, H, true]);
    expect(decoded.data[3]).toBeLessThan(16); // (0, 0): index 15
    expect(decoded.data[(5 * W + 1) * 4 + 3]).toBeGreaterThan(240);
    // The AVIF module is compiled on its first use in the isolate.
  }, 30_000);

  it('a first frame smaller than the screen: transparent outside its rectangle', async () => {
    const spec: GifSpec = {
      width: W,
      height: H,
      palette: PALETTE,
      frames: [{ left: 5, top: 7, width: 20, height: 9, indices: indicesOf(20, 9, (x, y) => (x + y) % 16) }],
    };
    const { res, body, text } = await send(makeGif(spec), { format: 'png' });
    expect(res.status, text()).toBe(200);
    const decoded = decodeAny(body);
    expect(decoded.data[3]).toBe(0);
    expect(decoded.data[(7 * W + 5) * 4 + 3]).toBe(255);
    expectSamePixels(decoded.data, expectedFrames(spec)[0]!, W);
  });
});

describe('an animated GIF', () => {
  it('answers its first frame, X-Frames 1/3; the later frames and their disposal are parsed, not shown', async () => {
    const spec: GifSpec = {
      width: W,
      height: H,
      palette: PALETTE,
      loop: 0,
      frames: [
        { width: W, height: H, indices: indicesOf(W, H, (x) => x % 16), disposal: 3, delayCs: 5 },
        { left: 3, top: 2, width: 10, height: 10, indices: new Uint8Array(100).fill(7), disposal: 2, delayCs: 5 },
        { width: 4, height: 4, indices: new Uint8Array(16).fill(9), transparentIndex: 0, interlaced: true },
      ],
    };
    const { res, body, text } = await send(makeGif(spec), { format: 'png' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('1/3');
    const [first, second] = expectedFrames(spec);
    expect(first).not.toEqual(second);
    expectSamePixels(decodeAny(body).data, first!, W);
  });
});

describe('an image URL whose source is a GIF', () => {
  it('keeps its kind as PNG without f on a tier without WebP (its first frame; animation: gif-anim.test.ts)', async () => {
    const a = await signingAccount('free');
    const url = `${ORIGIN}/img/stripes.gif?group=${crypto.randomUUID()}`;
    const kept = await getImage(await signed(a, '_', url));
    expect(kept.status, await kept.clone().text()).toBe(200);
    expect(kept.headers.get('content-type')).toBe('image/png');
    const decoded = decodeAny(await bodyBytes(kept));
    expect([decoded.width, decoded.height]).toEqual([16, 8]);
  });
});

/** A 2×2 GIF with a 4-colour table whose image data is `data` (LZW code size 2), cut into sub-blocks. */
const withData = (data: number[], width = 2, height = 2): Uint8Array => {
  const head = makeGif({ width, height, palette: spreadPalette(4), frames: [] });
  const image = [0x2c, 0, 0, 0, 0, width, 0, height, 0, 0, 2, ...subBlocks(Uint8Array.from(data)), 0x3b];
  return Uint8Array.from([...head.subarray(0, head.length - 1), ...image]);
};

describe('malformed GIFs: 422 unprocessable_image, never a 500 or a hang', () => {
  it('LZW data that ends before the last pixel', async () => {
    // Clear (4), 1, end (5): one pixel of four, in 3-bit codes.
    const message = await refusal(withData([0x4c, 0x01]), 422, 'unprocessable_image');
    expect(message).toMatch(/GIF cannot be decoded: frame 1: its image data ends before its last pixel/);
  });

  it('an LZW code that is not defined yet', async () => {
    // Clear (4), then code 7 with only 6 defined.
    const message = await refusal(withData([0x3c, 0x00]), 422, 'unprocessable_image');
    expect(message).toMatch(/a code that is not yet defined/);
  });

  it('a file cut inside its image data', async () => {
    const gif = makeGif(still());
    const message = await refusal(gif.subarray(0, gif.length - 40), 422, 'unprocessable_image');
    expect(message).toMatch(/truncated/);
  });

  it('an unknown block, and no colour table', async () => {
    const gif = makeGif(still());
    const broken = gif.slice();
    broken[13 + 16 * 3] = 0x99; // where the first extension starts
    expect(await refusal(broken, 422, 'unprocessable_image')).toMatch(/unknown byte 0x99/);
    const noTable = makeGif({ width: 2, height: 2, frames: [] });
    const image = [0x2c, 0, 0, 0, 0, 2, 0, 2, 0, 0, 2, 2, 0x4c, 0x01, 0, 0x3b];
    const bare = Uint8Array.from([...noTable.subarray(0, noTable.length - 1), ...image]);
    expect(await refusal(bare, 422, 'unprocessable_image')).toMatch(/no colour table/);
  });

  it('no image at all, from its structure', async () => {
    const empty = makeGif({ width: 2, height: 2, palette: spreadPalette(4), frames: [] });
    expect(await refusal(empty, 422, 'unprocessable_image')).toBe('the GIF has no image');
  });

  it('more image data than a frame can need', async () => {
    const message = await refusal(withData(new Array(5000).fill(0x4c)), 422, 'unprocessable_image');
    expect(message).toMatch(/more than its 2×2 pixels can need/);
  });
});

describe('limits, from the structure before decoding: 422 image_too_large', () => {
  it('a small file declaring a huge screen', async () => {
    const gif = makeGif({ width: 65535, height: 65535, palette: spreadPalette(4), frames: [] });
    const image = [0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4c, 0x01, 0, 0x3b];
    const bomb = Uint8Array.from([...gif.subarray(0, gif.length - 1), ...image]);
    expect(bomb.length).toBeLessThan(100);
    expect(await refusal(bomb, 422, 'image_too_large')).toMatch(
      /is 65535×65535 \(4294\.8 megapixels\); the limit is 100\.0 megapixels/,
    );
  });

  it('too many frames, and too many frame pixels', async () => {
    const frame = { width: 1, height: 1, indices: new Uint8Array(1) };
    const many = makeGif({ width: 2, height: 2, palette: PALETTE, frames: Array(MAX_GIF_FRAMES + 1).fill(frame) });
    expect(await refusal(many, 422, 'image_too_large')).toMatch(
      new RegExp(`has ${MAX_GIF_FRAMES + 1} frames; the limit is ${MAX_GIF_FRAMES}`),
    );
    // 26 frames of a 2000×2000 screen: 104 megapixels, in a file of a few hundred bytes.
    const big = makeGif({ width: 2000, height: 2000, palette: PALETTE, frames: Array(26).fill(frame) });
    expect(await refusal(big, 422, 'image_too_large')).toMatch(/26 frames come to 104\.0 megapixels/);
  });

  it('the memory plan counts an interlaced first frame’s indices, a byte a pixel', () => {
    const [w, h] = [1000, 800];
    const frames = (interlaced: boolean) => [{ width: w, height: h, indices: new Uint8Array(w * h), interlaced }];
    const estimate = (interlaced: boolean) => {
      const gif = makeGif({ width: w, height: h, palette: PALETTE, frames: frames(interlaced) });
      return plan('gif', readHeader('gif', gif), 10_000, { format: 'png', quality: 80 }).estimate;
    };
    expect(estimate(true) - estimate(false)).toBe(w * h);
  });
});
