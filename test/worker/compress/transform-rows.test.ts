// The row transform on its own (src/compress/transform/rows.ts), fed by a counting source: a crop that
// ends above the image's last row stops the decoder there when the source can stop (the JPEG and WebP
// engines restart cleanly), and pulls every row from one that cannot (the PNG decoder).
import { describe, expect, it } from 'vitest';
import { transformGeometry } from '../../../src/compress/transform/geometry.ts';
import { transformRows, type UprightRows } from '../../../src/compress/transform/rows.ts';

/** 100 grey rows of 40 pixels, each row's value its index; `pulled` counts the rows handed out. */
function counting(stoppable: boolean): UprightRows & { pulled: number } {
  const source = {
    channels: 1,
    stoppable,
    pulled: 0,
    rows: async (sink: (row: Uint8Array) => void | Promise<void>) => {
      for (let y = 0; y < 100; y++) {
        source.pulled++;
        await sink(new Uint8Array(40).fill(y));
      }
    },
  };
  return source;
}

const topCrop = transformGeometry(
  { width: 40, height: 100 },
  {
    fit: 'cover',
    gravity: 'top',
    rotate: 0,
    width: 40,
    height: 10,
  },
);

async function run(source: UprightRows, rotate: 0 | 90 = 0) {
  const geometry = rotate
    ? transformGeometry({ width: 40, height: 100 }, { fit: 'cover', gravity: 'right', rotate, width: 10, height: 40 })
    : topCrop;
  const rows: number[] = [];
  await transformRows(source, { geometry, rotate, background: [255, 255, 255, 255], flatten: true })((row) => {
    rows.push(row[0]!);
  });
  return rows;
}

describe('a crop above the last row', () => {
  it('stops a source that can stop after the last kept row', async () => {
    const source = counting(true);
    expect(await run(source)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(source.pulled).toBe(10);
  });

  it('stops it through a quarter turn too (the right of the turned image is the top of the rows)', async () => {
    const source = counting(true);
    const rows = await run(source, 90);
    expect(rows).toHaveLength(40);
    expect(source.pulled).toBe(10);
  });

  it('pulls every row from a source that cannot stop', async () => {
    const source = counting(false);
    expect(await run(source)).toHaveLength(10);
    expect(source.pulled).toBe(100);
  });
});

describe('a turned or reversed content gathered in bands', () => {
  /** 23 × 17 RGB pixels, each one different, from a source that cannot stop (every pass pulls all rows). */
  const source = (): UprightRows & { passes: number } => {
    const s = {
      channels: 3,
      passes: 0,
      rows: async (sink: (row: Uint8Array) => void | Promise<void>) => {
        s.passes++;
        for (let y = 0; y < 17; y++) await sink(new Uint8Array(23 * 3).map((_, i) => (y * 23 * 3 + i) % 251));
      },
    };
    return s;
  };

  it('writes the same rows as one frame, for every turn and mirror, with a decoder pass per band', async () => {
    for (const rotate of [0, 90, 180, 270] as const) {
      for (const flip of [undefined, 'h', 'v', 'hv'] as const) {
        const geometry = transformGeometry(
          { width: 23, height: 17 },
          { fit: 'cover', gravity: 'top-left', rotate, flip, width: 11, height: 9 },
        );
        const written = async (turnBandRows?: number) => {
          const s = source();
          const rows: number[][] = [];
          await transformRows(s, { geometry, rotate, flip, background: [0, 0, 0, 255], flatten: true, turnBandRows })(
            (row) => {
              rows.push([...row]);
            },
          );
          return { rows, passes: s.passes };
        };
        const whole = await written();
        const banded = await written(4);
        const what = `rotate ${rotate} flip ${flip}`;
        expect(banded.rows, what).toEqual(whole.rows);
        expect(whole.rows, what).toHaveLength(9);
        // Only a vertical flip or a turn gathers a frame; then 9 rows in bands of 4 take 3 passes.
        const gathers = rotate === 90 || rotate === 270 || (flip === 'v' || flip === 'hv') !== (rotate === 180);
        expect(banded.passes, what).toBe(gathers ? 3 : 1);
      }
    }
  });
});
