// The fit geometry against sharp's own: for each fit, sizes of several shapes (wide, tall, tiny, odd) and
// boxes give the output size sharp gives for its equivalent (issue 48: ±1 px), and the rotation swaps the
// axes as sharp's rotate does before its resize. Blank images: only the sizes are compared here.
import sharp, { type FitEnum } from 'sharp';
import { describe, expect, it } from 'vitest';
import { transformGeometry } from '../../src/compress/transform/geometry.ts';
import type { FitMode } from '../../src/compress/transform/options.ts';

/** Each fit's equivalent in sharp (docs/using-the-api.md, "Transformations"). */
const SHARP: Record<FitMode, { fit: keyof FitEnum; withoutEnlargement?: boolean }> = {
  'scale-down': { fit: 'inside', withoutEnlargement: true },
  contain: { fit: 'inside' },
  cover: { fit: 'cover' },
  crop: { fit: 'cover', withoutEnlargement: true },
  pad: { fit: 'contain' },
  squeeze: { fit: 'fill' },
};

const SOURCES = [
  [300, 200],
  [200, 300],
  [1234, 567],
  [17, 400],
  [64, 64],
] as const;
const BOXES = [
  [100, 100],
  [400, 400],
  [250, 80],
  [90, 700],
] as const;

async function sharpSize(w: number, h: number, fit: FitMode, bw: number, bh: number, rotate = 0) {
  const { info } = await sharp({ create: { width: w, height: h, channels: 3, background: '#808080' } })
    .rotate(rotate)
    .resize(bw, bh, { ...SHARP[fit], background: '#ffffff' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return [info.width, info.height];
}

describe("every fit's output size equals sharp's equivalent (±1 px)", () => {
  for (const fit of Object.keys(SHARP) as FitMode[]) {
    it(fit, async () => {
      for (const [w, h] of SOURCES) {
        for (const [bw, bh] of BOXES) {
          const ours = transformGeometry(
            { width: w, height: h },
            { fit, gravity: 'center', rotate: 0, width: bw, height: bh },
          ).output;
          const theirs = await sharpSize(w, h, fit, bw, bh);
          const what = `${fit} ${w}×${h} into ${bw}×${bh}: ours ${ours.width}×${ours.height}, sharp ${theirs.join('×')}`;
          expect(Math.abs(ours.width - theirs[0]!), what).toBeLessThanOrEqual(1);
          expect(Math.abs(ours.height - theirs[1]!), what).toBeLessThanOrEqual(1);
        }
      }
    });
  }

  it('rotate=90 comes before the fit, as sharp rotates before it resizes', async () => {
    for (const fit of ['scale-down', 'cover', 'crop'] as const) {
      const ours = transformGeometry(
        { width: 300, height: 200 },
        { fit, gravity: 'center', rotate: 90, width: 150, height: 250 },
      ).output;
      expect([ours.width, ours.height]).toEqual(await sharpSize(300, 200, fit, 150, 250, 90));
    }
  });
});

describe("the centre crop sits where sharp's does", () => {
  // Each row (or column) of the source is its own index, so the first one kept says where sharp cut. No
  // resize (the box fits one side exactly), so only the placement differs: an odd overflow has two middles.
  it.each([
    ['rows', 12, 201, 12, 200],
    ['rows', 12, 33, 12, 20],
    ['columns', 55, 12, 40, 12],
  ])('%s: %i×%i cover %i×%i', async (_, w, h, bw, bh) => {
    const data = Buffer.alloc(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[y * w + x] = w > bw ? x : y;
    const out = await sharp(data, { raw: { width: w, height: h, channels: 1 } })
      .resize(bw, bh, { fit: 'cover' })
      .raw()
      .toBuffer();
    const ours = transformGeometry(
      { width: w, height: h },
      { fit: 'cover', gravity: 'center', rotate: 0, width: bw, height: bh },
    );
    expect([ours.crop.x, ours.crop.y]).toEqual(w > bw ? [out[0], 0] : [0, out[0]]);
  });
});
