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
