// POST /api/v1/compress with an animated WebP or an AVIF sequence, as a caller sees it. Asked as WebP:
// an animated WebP with a frame per source frame, the source's durations and loop count, whose frames
// (composed as a WebP player does) match the source's within a tolerance. The animated WebP inputs are
// our own encoder's, made here from a GIF with transparency and disposal (so their frames use blend and
// disposal), then fed back in; the AVIF sequences are checked-in fixtures (test/fixtures/avif/README.md).
// anim=false and PNG output give the first frame, X-Frames 1/N; over the frame limits: 422; broken: 422.
// Tiny images, few requests.
import { beforeAll, describe, expect, it } from 'vitest';
import manyFrames from '../../fixtures/avif/sequence-1001-frames.avif';
import largeFrames from '../../fixtures/avif/sequence-102mp.avif';
import p3Sequence from '../../fixtures/avif/sequence-p3.avif';
import timedSequence from '../../fixtures/avif/sequence-timed.avif';
import { DISPLAY_P3_PROFILE } from '../../../src/compress/avif-input/display-p3.ts';
import { readHeader } from '../../../src/compress/header.ts';
import { riffChunks, withIccProfile } from '../../../src/compress/webp-riff.ts';
import { MAX_ANIM_FRAME_PIXELS, MAX_ANIM_FRAMES } from '../../../src/compress/limits.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../../wasm/instances.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';
import { bodyBytes, compressCall, decodeAny, quadrants, type Parts } from '../image-fixtures.ts';
import { expectedFrames, indicesOf, makeGif, spreadPalette, type GifSpec } from '../gif-fixtures.ts';
import { composedFrames, maxDifference, meanDifference, readAnimatedWebp } from '../webp-anim-fixtures.ts';

let pro: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
});

async function send(image: Uint8Array, parts: Parts, filename = 'anim.webp') {
  const res = await compressCall(pro.key, { image, filename, ...parts });
  const body = await bodyBytes(res);
  return { res, body, text: () => new TextDecoder().decode(body) };
}

const [W, H] = [40, 24];
const PALETTE = spreadPalette(16);
// A background with a transparent corner, a square over it (disposal 3: restored after it), a frame whose
// transparent pixels leave the screen as it was (disposal 2: cleared after it), and a last one.
const SPEC: GifSpec = {
  width: W,
  height: H,
  palette: PALETTE,
  loop: 4,
  frames: [
    {
      width: W,
      height: H,
      indices: indicesOf(W, H, (x, y) => (x < 6 && y < 6 ? 0 : 1 + ((x >> 3) % 15))),
      transparentIndex: 0,
      disposal: 1,
      delayCs: 7,
    },
    {
      left: 10,
      top: 4,
      width: 12,
      height: 10,
      indices: indicesOf(12, 10, (x) => 3 + (x >> 2)),
      disposal: 3,
      delayCs: 15,
    },
    {
      left: 20,
      top: 8,
      width: 14,
      height: 12,
      indices: indicesOf(14, 12, (x, y) => ((x + y) % 3 === 0 ? 0 : 12)),
      transparentIndex: 0,
      disposal: 2,
      delayCs: 20,
    },
    { left: 0, top: 12, width: 16, height: 12, indices: new Uint8Array(16 * 12).fill(14), delayCs: 30 },
  ],
};

let made: Promise<Uint8Array> | undefined;

/** Our own animated WebP of SPEC (lossless: its frames are SPEC's frames exactly), made once. */
function animatedWebp(): Promise<Uint8Array> {
  made ??= send(makeGif(SPEC), { format: 'webp', lossless: 'true' }, 'anim.gif').then(({ res, body, text }) => {
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('4/4');
    return body;
  });
  return made;
}

const fourcc = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));
const le = (v: number, n: number): number[] => Array.from({ length: n }, (_, i) => (v >>> (8 * i)) & 255);
const chunk = (id: string, data: number[]): number[] => [
  ...fourcc(id),
  ...le(data.length, 4),
  ...data,
  ...(data.length & 1 ? [0] : []),
];

/** An animated WebP's container: VP8X (animation flag, the canvas), ANIM and `frames` ANMF chunks of 1×1 (their data never read). */
function animationShell(width: number, height: number, frames: number): Uint8Array {
  const vp8x = [0x02, 0, 0, 0, ...le(width - 1, 3), ...le(height - 1, 3)];
  const anmf = chunk('ANMF', [
    ...le(0, 3),
    ...le(0, 3),
    ...le(0, 3),
    ...le(0, 3),
    ...le(100, 3),
    0,
    ...chunk('VP8L', [0x2f, 0, 0, 0, 0]),
  ]);
  const body = [
    ...fourcc('WEBP'),
    ...chunk('VP8X', vp8x),
    ...chunk('ANIM', [0, 0, 0, 0, 0, 0]),
    ...Array(frames).fill(anmf).flat(),
  ];
  return Uint8Array.from([...fourcc('RIFF'), ...le(body.length, 4), ...body]);
}

// The first request loads the engine and the GIF path (seconds on a loaded machine).
describe('an animated WebP in', { timeout: 30_000 }, () => {
  it('as WebP: an animated WebP, a frame per frame, durations and loop count kept, frames as composed', async () => {
    const source = await animatedWebp();
    const { res, body, text } = await send(source, { format: 'webp', lossless: 'true' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('x-frames')).toBe('4/4');
    const [before, after] = [readAnimatedWebp(source), readAnimatedWebp(body)];
    expect(after.loop).toBe(5);
    expect(after.frames.map((f) => f.duration)).toEqual([70, 150, 200, 300]);
    expect(after.frames.map((f) => f.duration)).toEqual(before.frames.map((f) => f.duration));
    const got = composedFrames(after, W, H);
    for (const [i, frame] of expectedFrames(SPEC).entries())
      expect(maxDifference(got[i]!, frame), `frame ${i}`).toBe(0);
  });

  it('lossy and resized: every frame, each within a tolerance of the source frame resized', async () => {
    const source = await animatedWebp();
    const { res, body, text } = await send(source, { format: 'webp', quality: '90', width: '20' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('4/4');
    const webp = readAnimatedWebp(body);
    expect(webp.frames).toHaveLength(4);
    const got = composedFrames(webp, 20, 12);
    // The source's own first frame as a still PNG, resized by the same request: the reference for frame 0.
    const still = await send(source, { format: 'png', width: '20' });
    expect(still.res.status, still.text()).toBe(200);
    expect(meanDifference(got[0]!, decodeAny(still.body).data)).toBeLessThan(6);
  });

  it('anim=false and PNG output: the first frame, X-Frames 1/4', async () => {
    const source = await animatedWebp();
    const first = expectedFrames(SPEC)[0]!;
    const still = await send(source, { format: 'webp', lossless: 'true', anim: 'false' });
    expect(still.res.status, still.text()).toBe(200);
    expect(still.res.headers.get('x-frames')).toBe('1/4');
    expect(still.text().includes('ANMF')).toBe(false);
    expect(maxDifference(decodeAny(still.body).data, first)).toBe(0);
    const png = await send(source, { format: 'png' });
    expect(png.res.status, png.text()).toBe(200);
    expect(png.res.headers.get('x-frames')).toBe('1/4');
    expect(maxDifference(decodeAny(png.body).data, first)).toBe(0);
  });

  it('a writer that reads the rows twice (a streamed PNG) gets the first frame both times', async () => {
    // 10 MB: the PNG is streamed (not optimised whole): its smallest layout found in one pass, written in a second.
    const res = await compressCall(
      pro.key,
      { image: await animatedWebp(), filename: 'anim.webp', format: 'png' },
      { env: { MEMORY_BUDGET_MB: '10' } },
    );
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body)).toBe(200);
    expect(res.headers.get('x-frames')).toBe('1/4');
    expect(maxDifference(decodeAny(body).data, expectedFrames(SPEC)[0]!)).toBe(0);
  });

  it('its ICC profile goes with it: into the animated WebP (ICCP), and into a still of its first frame', async () => {
    const source = withIccProfile(await animatedWebp(), DISPLAY_P3_PROFILE);
    const anim = await send(source, { format: 'webp', lossless: 'true' });
    expect(anim.res.status, anim.text()).toBe(200);
    const chunks = riffChunks(anim.body);
    expect(chunks.map((c) => c.tag).slice(0, 3)).toEqual(['VP8X', 'ICCP', 'ANIM']);
    expect(chunks[1]!.data).toEqual(DISPLAY_P3_PROFILE);
    expect(readAnimatedWebp(anim.body).frames).toHaveLength(4);
    const png = await send(source, { format: 'png' });
    expect(png.res.status, png.text()).toBe(200);
    expect(new TextDecoder('latin1').decode(png.body).includes('iCCP')).toBe(true);
  });

  it('format=json: its frames, total duration and loop count', async () => {
    const { res, text } = await send(await animatedWebp(), { format: 'json' });
    expect(res.status, text()).toBe(200);
    const info = JSON.parse(text());
    expect([info.frames, info.duration_ms, info.loop]).toEqual([4, 720, 5]);
  });

  it('over the frame limits, 422 image_too_large saying which; broken frames, 422', async () => {
    const many = await send(animationShell(2, 2, MAX_ANIM_FRAMES + 1), { format: 'webp' });
    expect(many.res.status, many.text()).toBe(422);
    expect(JSON.parse(many.text()).error.code).toBe('image_too_large');
    expect(JSON.parse(many.text()).error.message).toContain(`${MAX_ANIM_FRAMES + 1} frames`);
    const large = await send(animationShell(8000, 8000, 2), { format: 'png' });
    expect(large.res.status, large.text()).toBe(422);
    expect(JSON.parse(large.text()).error.message).toContain('megapixels of frames');
    const source = await animatedWebp();
    const truncated = await send(source.subarray(0, source.length - 30), { format: 'webp' });
    expect(truncated.res.status, truncated.text()).toBe(422);
    expect(JSON.parse(truncated.text()).error.code).toBe('unprocessable_image');
    // The first frame's VP8L data overwritten: a RIFF that is whole, frames that are not.
    const corrupt = source.slice();
    const at = new TextDecoder('latin1').decode(corrupt).indexOf('VP8L') + 13;
    corrupt.fill(0xff, at, at + 24);
    for (const format of ['webp', 'png']) {
      const broken = await send(corrupt, { format });
      expect(broken.res.status, broken.text()).toBe(422);
      expect(JSON.parse(broken.text()).error.code).toBe('unprocessable_image');
    }
  });

  it("the plan counts the decoder's canvases and the encoder's, and the engine's memory stays within it", async () => {
    const [w, h] = [400, 300];
    const big: GifSpec = {
      width: w,
      height: h,
      palette: PALETTE,
      frames: [0, 1, 2].map((shift) => ({
        width: w,
        height: h,
        indices: indicesOf(w, h, (x, y) => ((x >> 3) + (y >> 4) + shift) % 16),
        delayCs: 4,
      })),
    };
    const made = await send(makeGif(big), { format: 'webp', quality: '80' }, 'big.gif');
    expect(made.res.status, made.text()).toBe(200);
    const webp = made.body;
    const header = readHeader('webp', webp);
    const MiB = 1024 * 1024;
    const planned = plan('webp', header, webp.length, { format: 'webp', quality: 80 }, 100 * MiB);
    resetWasmInstances();
    const { res, text } = await send(webp, { format: 'webp', quality: '80' });
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('3/3');
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(planned.estimate);
  });
});

describe('an AVIF sequence in', { timeout: 30_000 }, () => {
  const sequence = () => new Uint8Array(timedSequence);
  // The fixture's frames: quadrants, the gradient (200, 120 + y, 40 + x), quadrants again (64×48).
  const gradient = () => {
    const data = new Uint8Array(64 * 48 * 4);
    for (let y = 0; y < 48; y++) for (let x = 0; x < 64; x++) data.set([200, 120 + y, 40 + x, 255], (y * 64 + x) * 4);
    return data;
  };

  it('as WebP: an animated WebP, a frame per frame, the track durations, for ever without an edit list', async () => {
    const { res, body, text } = await send(sequence(), { format: 'webp', lossless: 'true' }, 'seq.avif');
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('3/3');
    const webp = readAnimatedWebp(body);
    expect(webp.loop).toBe(0);
    expect(webp.frames.map((f) => f.duration)).toEqual([100, 250, 400]);
    const got = composedFrames(webp, 64, 48);
    const expected = [quadrants(64, 48).data, gradient(), quadrants(64, 48).data];
    // AV1 at quantiser 8–12 in 4:2:0: colours within a few levels, edges a little more.
    for (const [i, frame] of expected.entries()) expect(meanDifference(got[i]!, frame), `frame ${i}`).toBeLessThan(4);
  });

  it("the plan counts the reference pictures and the canvas, and the decoder's and encoder's memory stays within it", async () => {
    const header = readHeader('avif', sequence());
    const MiB = 1024 * 1024;
    const request = { format: 'webp' as const, quality: 80 };
    const animated = plan('avif', header, sequence().length, request, 100 * MiB);
    const still = plan('avif', header, sequence().length, { ...request, anim: false }, 100 * MiB);
    // AV1's 8 reference pictures (64×48 padded to 128×128, 4:2:0 with alpha: 40 KB each) and the canvas.
    expect(animated.estimate - still.estimate).toBeGreaterThanOrEqual(8 * 128 * 128 * 2.5 + 64 * 48 * 4);
    resetWasmInstances();
    const { res, text } = await send(sequence(), { format: 'webp' }, 'seq.avif');
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('3/3');
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(animated.estimate);
  });

  it('Display P3 by nclx is converted to sRGB in the animated WebP (it carries no profile of its own)', async () => {
    const { res, body, text } = await send(new Uint8Array(p3Sequence), { format: 'webp', lossless: 'true' }, 'p3.avif');
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('2/2');
    expect(riffChunks(body).some((c) => c.tag === 'ICCP')).toBe(false);
    // The gradient's code values (200, 120 + y, 40 + x) as Display P3, in sRGB: the P3 → sRGB matrix on
    // linear light. Read as sRGB they would stay (200, 120, 40): 14 levels of red and 40 of blue away.
    const lin = (v: number) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const enc = (v: number) => {
      const c = Math.min(1, Math.max(0, v));
      return Math.round(255 * (c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055));
    };
    const [r, g, b] = [200, 120, 40].map((v) => lin(v / 255)) as [number, number, number];
    const expected = [
      enc(1.2249 * r - 0.2247 * g),
      enc(-0.042 * r + 1.0419 * g),
      enc(-0.0197 * r - 0.0786 * g + 1.0979 * b),
    ];
    const first = composedFrames(readAnimatedWebp(body), 64, 48)[0]!;
    for (let c = 0; c < 3; c++) expect(Math.abs(first[c]! - expected[c]!), `channel ${c}`).toBeLessThanOrEqual(4);
  });

  it('over the frame limits, 422 image_too_large saying which, animated or not', async () => {
    // Real sequences made by avifenc (README.md): 1,001 frames of 16×16, and 10 frames of 3200×3200 (102.4
    // megapixels of frames). Refused from the track's boxes, before any frame is decoded.
    expect(MAX_ANIM_FRAMES).toBe(1000);
    expect(MAX_ANIM_FRAME_PIXELS).toBe(100_000_000);
    for (const format of ['webp', 'png']) {
      const many = await send(new Uint8Array(manyFrames), { format }, 'many.avif');
      expect(many.res.status, many.text()).toBe(422);
      const { error } = JSON.parse(many.text());
      expect(error).toMatchObject({ code: 'image_too_large', param: 'image' });
      expect(error.message).toBe('the AVIF sequence has 1001 frames; the limit is 1000');
      const large = await send(new Uint8Array(largeFrames), { format }, 'large.avif');
      expect(large.res.status, large.text()).toBe(422);
      expect(JSON.parse(large.text()).error.message).toBe(
        "the AVIF sequence's 10 frames come to 102.4 megapixels (each counts its 3200×3200 canvas); the limit is 100 megapixels of frames",
      );
    }
  });

  it('cut or corrupt in its frames: 422 unprocessable_image, never 500', async () => {
    // sequence-timed.avif: mdat at 1,756 (202 bytes) holds the alpha samples (27, 16, 16 bytes from 1,764),
    // then the colour samples (56, 58 and 21 bytes from 1,823).
    const good = sequence();
    // Cut: the mdat box incomplete, refused before decoding.
    const cut = 'the AVIF cannot be read: it is truncated: its mdat box is incomplete';
    const cases: [string, Uint8Array, string[], string][] = [
      ['cut inside the third frame', good.subarray(0, 1945), ['webp', 'png'], cut],
      ['cut inside the first frame', good.subarray(0, 1850), ['webp', 'png'], cut],
    ];
    // The second colour frame overwritten (the boxes whole): the first frame still decodes, so only the
    // animation, which decodes every frame, is refused.
    const corrupt = good.slice();
    corrupt.fill(0xff, 1879 + 4, 1879 + 54);
    cases.push(['the second frame corrupt', corrupt, ['webp'], 'the AVIF cannot be decoded: decode:']);
    // The third colour sample's size (stsz) 2,000 bytes: its data runs past the end of the file.
    const overrun = good.slice();
    const stsz = [...new TextDecoder('latin1').decode(overrun).matchAll(/stsz/g)].map((m) => m.index!);
    // The box's type, version and flags, sample size (0: a table), count, then the table.
    const colour = stsz.find((at) => new DataView(overrun.buffer).getUint32(at + 16) === 56);
    expect(colour).toBeDefined();
    new DataView(overrun.buffer).setUint32(colour! + 16 + 8, 2000);
    // libavif checks every sample's range when it parses the track: refused for the first frame too.
    cases.push(['a frame past the end of the file', overrun, ['webp', 'png'], 'the AVIF cannot be decoded: parse:']);
    for (const [what, file, formats, message] of cases) {
      for (const format of formats) {
        const { res, text } = await send(file, { format }, 'seq.avif');
        expect(res.status, `${what}, ${format}: ${text()}`).toBe(422);
        const { error } = JSON.parse(text());
        expect(error, `${what}, ${format}`).toMatchObject({ code: 'unprocessable_image', param: 'image' });
        expect(error.message, `${what}, ${format}`).toContain(message);
      }
    }
    // With the second frame corrupt, its first frame alone (PNG) is whole: 200, X-Frames 1/3.
    const first = await send(corrupt, { format: 'png' }, 'seq.avif');
    expect(first.res.status, first.text()).toBe(200);
    expect(first.res.headers.get('x-frames')).toBe('1/3');
  });

  it('without animation: the first frame, X-Frames 1/3', async () => {
    const { res, body, text } = await send(sequence(), { format: 'webp', anim: 'false' }, 'seq.avif');
    expect(res.status, text()).toBe(200);
    expect(res.headers.get('x-frames')).toBe('1/3');
    expect(text().includes('ANMF')).toBe(false);
    expect(meanDifference(decodeAny(body).data, quadrants(64, 48).data)).toBeLessThan(4);
  });
});

describe('an image URL whose source is an animated WebP or an AVIF sequence', { timeout: 30_000 }, () => {
  it('is animated WebP without f and with f=auto (never AVIF); anim=false gives the first frame', async () => {
    const a = await signingAccount('pro');
    const name = crypto.randomUUID();
    const put = await fetch(`${ORIGIN}/img/kept?name=${name}`, { method: 'PUT', body: await animatedWebp() });
    expect(put.status).toBe(204);
    const frameCount = async (res: Response): Promise<number> => {
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      return readAnimatedWebp(await bodyBytes(res)).frames.length;
    };
    const accept = { Accept: 'image/avif,image/webp,*/*' };
    for (const [url, frames] of [
      [`${ORIGIN}/img/kept?name=${name}`, 4],
      [`${ORIGIN}/img/sequence-timed.avif?group=${name}`, 3],
    ] as const) {
      expect(await frameCount(await getImage(await signed(a, '_', url))), url).toBe(frames);
      expect(await frameCount(await getImage(await signed(a, 'f=auto', url), accept)), url).toBe(frames);
      const still = await getImage(await signed(a, 'f=webp,anim=false', url));
      expect(still.status, await still.clone().text()).toBe(200);
      expect(new TextDecoder().decode(await bodyBytes(still)).includes('ANMF')).toBe(false);
    }
  });
});
