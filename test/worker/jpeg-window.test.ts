// A JPEG's rows read through a window (the crop box of a transformation): the engine skips the rows
// above it, crops the columns beside it and stops after its last row, and the window's pixels are the
// whole decode's, byte for byte, for every sampling, grey, progressive, DCT scaling with the resampler
// and the EXIF orientations (the box is upright; the engine maps it to the stored rows).
import { describe, expect, it } from 'vitest';
import { encodePixelsJpeg, JpegRowReader } from '../../wasm/jpeg-engine.ts';
import { photo } from './image-fixtures.ts';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A photo-like JPEG: RGB with the given sampling, or grey. */
function jpegFixture(
  width: number,
  height: number,
  options: { sampling?: [number, number]; progressive?: boolean; grey?: boolean },
) {
  const rgba = photo(width, height).data;
  if (options.grey) {
    const grey = new Uint8Array(width * height).map((_, i) => rgba[i * 4 + 1]!);
    return encodePixelsJpeg(grey, width, height, 1, { quality: 90, progressive: options.progressive });
  }
  const rgb = rgba.filter((_, i) => i % 4 !== 3);
  return encodePixelsJpeg(rgb, width, height, 3, { quality: 90, ...options });
}

/** Every upright row the reader hands out, and the rows the engine decoded for them. */
async function read(
  jpeg: Uint8Array,
  scaleNum: number,
  size: [number, number],
  orientation: number,
  window?: Box,
): Promise<{ rows: Uint8Array[]; width: number; decoded: number }> {
  const reader = new JpegRowReader(jpeg, scaleNum, size[0], size[1], orientation, window);
  try {
    const rows: Uint8Array[] = [];
    await reader.rows((row) => {
      rows.push(row.slice());
    });
    return { rows, width: reader.width, decoded: reader.rowsDecoded };
  } finally {
    reader.close(false);
  }
}

/** The window's block cut out of the whole decode's upright rows. */
function cut(rows: Uint8Array[], channels: number, box: Box): Uint8Array[] {
  return rows
    .slice(box.y, box.y + box.height)
    .map((row) => row.slice(box.x * channels, (box.x + box.width) * channels));
}

describe('a window of a JPEG decode', () => {
  const W = 203;
  const H = 157;
  const box: Box = { x: 61, y: 45, width: 70, height: 53 };

  it.each([
    ['4:2:0', { sampling: [2, 2] as [number, number] }],
    ['4:2:2', { sampling: [2, 1] as [number, number] }],
    ['4:4:4', { sampling: [1, 1] as [number, number] }],
    ['grey', { grey: true }],
    ['progressive 4:2:0', { sampling: [2, 2] as [number, number], progressive: true }],
  ])('%s: the same pixels as the whole decode, at full size, a DCT scale and resampled', async (_, options) => {
    const jpeg = jpegFixture(W, H, options);
    const cases: { scale: number; size: [number, number] }[] = [
      { scale: 8, size: [W, H] },
      { scale: 8, size: [151, 117] },
      { scale: 4, size: [W >> 1, Math.ceil(H / 2)] },
      { scale: 4, size: [83, 64] },
    ];
    for (const { scale, size } of cases) {
      const what = `scale ${scale}/8 to ${size.join('×')}`;
      const whole = await read(jpeg, scale, size, 1);
      const channels = whole.rows[0]!.length / size[0];
      const b = { ...box, width: Math.min(box.width, size[0] - box.x), height: Math.min(box.height, size[1] - box.y) };
      const windowed = await read(jpeg, scale, size, 1, b);
      expect(windowed.width, what).toBe(b.width);
      expect(windowed.rows.length, what).toBe(b.height);
      expect(windowed.rows, what).toEqual(cut(whole.rows, channels, b));
    }
  });

  it.each([3, 6, 8])('orientation %i: the box is upright; the same pixels as the whole upright decode', async (o) => {
    const jpeg = jpegFixture(W, H, { sampling: [2, 2] });
    // Stored W × H resampled to 151 × 117; upright it is 117 × 151 for 6 and 8.
    const size: [number, number] = [151, 117];
    const whole = await read(jpeg, 8, size, o);
    const upright = { x: 20, y: 31, width: 40, height: 57 };
    const windowed = await read(jpeg, 8, size, o, upright);
    expect(windowed.rows.length).toBe(upright.height);
    expect(windowed.rows).toEqual(cut(whole.rows, 3, upright));
  });

  it('never decodes the rows above the box, nor those below it', async () => {
    // 1024 rows: the box is 32 of them, 800 rows down.
    const jpeg = jpegFixture(64, 1024, { sampling: [2, 2] });
    const whole = await read(jpeg, 8, [64, 1024], 1);
    expect(whole.decoded).toBe(1024);
    const box = { x: 16, y: 800, width: 32, height: 32 };
    const windowed = await read(jpeg, 8, [64, 1024], 1, box);
    expect(windowed.rows).toEqual(cut(whole.rows, 3, box));
    // The box's rows and an iMCU row (16) of margin above them: nothing else.
    expect(windowed.decoded).toBeLessThanOrEqual(32 + 16);
  });
});
