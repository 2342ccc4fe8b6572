// The GIF decoder (src/compress/gif/) on its own, in Node, against sharp's (libvips over libnsgif, an
// independent decoder): every frame composed with each disposal method, interlaced frames, local colour
// tables, transparency, frame rectangles smaller than the screen or reaching past it; animated GIFs that
// sharp itself writes (cgif: frames cut to the rectangles that changed, transparency between them); and
// a 256-colour frame of noise, whose LZW table fills and is cleared many times. The first frame's row
// stream (what the service writes) is checked against the composed first frame.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { composeFrames, decodeFirstFrameRows } from '../../src/compress/gif/decoder.ts';
import { GifError, readGifStructure } from '../../src/compress/gif/structure.ts';
import { expectedFrames, indicesOf, makeGif, spreadPalette, type GifSpec } from '../worker/gif-fixtures.ts';

async function ourFrames(gif: Uint8Array): Promise<Uint8Array[]> {
  const info = readGifStructure(gif);
  expect(info.defect).toBeNull();
  const frames: Uint8Array[] = [];
  await composeFrames(gif, info, (canvas) => {
    frames.push(canvas.slice());
  });
  return frames;
}

async function firstFrameRows(gif: Uint8Array): Promise<Uint8Array> {
  const info = readGifStructure(gif);
  const out = new Uint8Array(info.width * info.height * 4);
  await decodeFirstFrameRows(gif, info, (row, y) => {
    out.set(row, y * info.width * 4);
  });
  return out;
}

/** sharp's frames, RGBA, one per page. */
async function sharpFrames(gif: Uint8Array): Promise<Uint8Array[]> {
  const { data, info } = await sharp(gif, { animated: true }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const pages = info.pages ?? 1;
  const size = info.width * (info.pageHeight ?? info.height) * 4;
  return Array.from({ length: pages }, (_, i) => new Uint8Array(data.subarray(i * size, (i + 1) * size)));
}

/** Pixels that differ (a transparent pixel's colour does not count), as "frame f (x, y): ours vs theirs". */
function differences(ours: Uint8Array[], theirs: Uint8Array[], width: number): string[] {
  expect(ours.length).toBe(theirs.length);
  const found: string[] = [];
  ours.forEach((frame, f) => {
    for (let i = 0; i < frame.length; i += 4) {
      const a = frame.subarray(i, i + 4);
      const b = theirs[f]!.subarray(i, i + 4);
      const same = a[3] === b[3] && (a[3] === 0 || (a[0] === b[0] && a[1] === b[1] && a[2] === b[2]));
      if (!same && found.length < 5)
        found.push(`frame ${f} (${(i / 4) % width}, ${Math.floor(i / 4 / width)}): ${[...a]} vs ${[...b]}`);
    }
  });
  return found;
}

const [W, H] = [24, 17];
const PALETTE = spreadPalette(16);
const block = (w: number, h: number, colour: number) => new Uint8Array(w * h).fill(colour);

/** Frames exercising each disposal method: later frames show whether the earlier ones were disposed right. */
const disposals: GifSpec = {
  width: W,
  height: H,
  palette: PALETTE,
  loop: 0,
  frames: [
    { width: W, height: H, indices: indicesOf(W, H, (x, y) => (x + 2 * y) % 16), disposal: 1, delayCs: 10 },
    { left: 2, top: 3, width: 8, height: 6, indices: block(8, 6, 3), disposal: 3, delayCs: 10 },
    // With a transparency index: libnsgif then clears to transparent too (see the test of the case without).
    { left: 6, top: 5, width: 9, height: 7, indices: block(9, 7, 5), disposal: 2, transparentIndex: 15, delayCs: 10 },
    {
      left: 4,
      top: 1,
      width: 12,
      height: 12,
      indices: indicesOf(12, 12, (x, y) => ((x ^ y) & 1 ? 0 : 9)),
      transparentIndex: 0,
      disposal: 0,
      delayCs: 10,
    },
    { left: 0, top: 10, width: 5, height: 5, indices: block(5, 5, 11), delayCs: 10 },
  ],
};

const interlacedLocal: GifSpec = {
  width: W,
  height: H,
  palette: PALETTE,
  frames: [
    {
      width: W,
      height: H,
      interlaced: true,
      palette: spreadPalette(64).reverse(),
      indices: indicesOf(W, H, (x, y) => (x * 3 + y * 5) % 64),
    },
    { left: 3, top: 4, width: 11, height: 13, interlaced: true, indices: indicesOf(11, 13, (x, y) => (x + y) % 16) },
  ],
};

const smallFirst: GifSpec = {
  width: W,
  height: H,
  palette: PALETTE,
  frames: [
    { left: 5, top: 3, width: 10, height: 7, indices: indicesOf(10, 7, (x) => x + 1), transparentIndex: 4 },
    { left: 0, top: 0, width: 6, height: 6, indices: block(6, 6, 2) },
  ],
};

describe('GIF frames composed: as meant, and as sharp decodes them', () => {
  for (const [name, spec] of [
    ['each disposal method (0–3) and transparency', disposals],
    ['interlaced frames with a local colour table', interlacedLocal],
    ['a first frame smaller than the screen, with a transparency index', smallFirst],
  ] as const) {
    it(name, async () => {
      const gif = makeGif(spec);
      const ours = await ourFrames(gif);
      expect(differences(ours, expectedFrames(spec), W)).toEqual([]);
      expect(differences(ours, await sharpFrames(gif), W)).toEqual([]);
      expect(differences([await firstFrameRows(gif)], [ours[0]!], W)).toEqual([]);
    });
  }

  it('disposal 2 without a transparency index clears to transparent, as browsers do (libnsgif, like Pillow, paints the background colour)', async () => {
    const spec: GifSpec = {
      width: 8,
      height: 8,
      palette: PALETTE,
      frames: [
        { width: 8, height: 8, indices: block(8, 8, 6), disposal: 2 },
        { width: 2, height: 2, indices: block(2, 2, 7) },
      ],
    };
    const gif = makeGif(spec);
    const ours = await ourFrames(gif);
    expect(differences(ours, expectedFrames(spec), 8)).toEqual([]);
    const last = (frames: Uint8Array[]) => [...frames[1]!.subarray(-4)];
    expect(last(ours)).toEqual([0, 0, 0, 0]);
    expect(last(await sharpFrames(gif))).toEqual([...PALETTE[0]!, 255]); // the background colour's index is 0
  });

  it('a frame reaching past the screen is clipped, not refused', async () => {
    const spec: GifSpec = {
      width: 10,
      height: 8,
      palette: PALETTE,
      frames: [
        { width: 10, height: 8, indices: block(10, 8, 1) },
        { left: 6, top: 5, width: 9, height: 9, indices: indicesOf(9, 9, (x, y) => (x + y) % 16), interlaced: true },
      ],
    };
    const gif = makeGif(spec);
    const ours = await ourFrames(gif);
    expect(differences(ours, expectedFrames(spec), 10)).toEqual([]);
  });

  it('animated GIFs written by sharp (cgif): every frame as sharp reads it back', async () => {
    const [w, h, n] = [40, 30, 6];
    const raw = new Uint8Array(w * h * n * 4);
    for (let f = 0; f < n; f++)
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
          const i = ((f * h + y) * w + x) * 4;
          const inBall = (x - 6 - f * 5) ** 2 + (y - 15) ** 2 < 36;
          raw.set(inBall ? [250, 40, 40, 255] : x < 4 && f % 2 ? [0, 0, 0, 0] : [20, 90 + y * 4, 200, 255], i);
        }
    const gif = new Uint8Array(
      await sharp(raw, { raw: { width: w, height: h * n, channels: 4, pageHeight: h } })
        .gif({ delay: 80, loop: 0 })
        .toBuffer(),
    );
    const info = readGifStructure(gif);
    expect(info.frameCount).toBe(n);
    expect(info.loopCount).toBe(0);
    expect(differences(await ourFrames(gif), await sharpFrames(gif), w)).toEqual([]);
  });

  it('a full LZW table kept without a clear code (deferred clear): 12-bit codes to the end', async () => {
    const [w, h] = [120, 90];
    let seed = 11;
    const noise = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 28;
    const spec: GifSpec = {
      width: w,
      height: h,
      palette: spreadPalette(16),
      frames: [{ width: w, height: h, indices: indicesOf(w, h, () => noise()), deferredClear: true }],
    };
    const gif = makeGif(spec);
    const ours = await ourFrames(gif);
    expect(differences(ours, expectedFrames(spec), w)).toEqual([]);
    expect(differences(ours, await sharpFrames(gif), w)).toEqual([]);
  });

  it('256 colours of noise: the LZW table fills and is cleared, codes reach 12 bits', async () => {
    const [w, h] = [160, 120];
    let seed = 7;
    const noise = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const spec: GifSpec = {
      width: w,
      height: h,
      palette: spreadPalette(256),
      frames: [{ width: w, height: h, indices: indicesOf(w, h, () => noise()) }],
    };
    const gif = makeGif(spec);
    const ours = await ourFrames(gif);
    expect(differences(ours, expectedFrames(spec), w)).toEqual([]);
    expect(differences(ours, await sharpFrames(gif), w)).toEqual([]);
  });
});

describe('damaged GIFs', () => {
  it('1,000 seeded mutations (bytes changed, cut short): each decodes or is a GifError, never another error or a hang', async () => {
    const base = makeGif(disposals);
    let seed = 2026;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const outcomes = { decoded: 0, refused: 0 };
    for (let i = 0; i < 1000; i++) {
      const bytes = base.slice(0, i % 4 === 0 ? random(base.length) : base.length);
      for (let flips = 1 + random(4); flips > 0 && bytes.length > 0; flips--) bytes[random(bytes.length)] = random(256);
      try {
        const info = readGifStructure(bytes);
        if (info.frames.length === 0) throw new GifError('no image');
        await decodeFirstFrameRows(bytes, info, () => {});
        await composeFrames(bytes, info, () => {});
        outcomes.decoded++;
      } catch (err) {
        if (!(err instanceof GifError)) throw new Error(`mutation ${i}: ${String(err)}`);
        outcomes.refused++;
      }
    }
    // Both kinds occur, so the test sees decoding of damaged data as well as refusals.
    expect(outcomes.decoded).toBeGreaterThan(50);
    expect(outcomes.refused).toBeGreaterThan(50);
  });
});
