// The ISO 21496-1 gain map metadata reader (src/compress/gain-map/iso21496.ts) on hand-made blocks: the
// bytes are written here field by field as libultrahdr lays them out, so the reader is not checked
// against a writer of its own.
import { describe, expect, it } from 'vitest';
import { readIsoGainMap } from '../../src/compress/gain-map/iso21496.ts';

/** Big-endian fields: [bytes, value] pairs, negative values of 4 bytes as two's complement. */
function block(...fields: [1 | 2 | 4, number][]): Uint8Array {
  const out = new Uint8Array(fields.reduce((n, [size]) => n + size, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [size, value] of fields) {
    if (size === 1) view.setUint8(at, value);
    else if (size === 2) view.setUint16(at, value);
    else if (value < 0) view.setInt32(at, value);
    else view.setUint32(at, value);
    at += size;
  }
  return out;
}

const versions = (minimum = 0, writer = 0): [1 | 2 | 4, number][] => [
  [2, minimum],
  [2, writer],
];
/** A value as numerator and denominator. */
const frac = (n: number, d: number): [1 | 2 | 4, number][] => [
  [4, n],
  [4, d],
];

/** One channel over a common denominator (flags 0x48): headrooms, then min, max, gamma and the offsets. */
const commonBlock = (denominator: number, ...numerators: number[]): Uint8Array =>
  block(...versions(), [1, 0x48], [4, denominator], ...numerators.map((n): [4, number] => [4, n]));

// One channel: headrooms 0 and 2.5, min −0.25, max 2.5, gamma 1, offsets 1/64.
const ONE_CHANNEL = block(
  ...versions(),
  [1, 0x40],
  ...frac(0, 1),
  ...frac(5, 2),
  ...frac(-1, 4),
  ...frac(5, 2),
  ...frac(1, 1),
  ...frac(1, 64),
  ...frac(1, 64),
);

describe('readIsoGainMap', () => {
  it('reads one set of values for all three channels, with its own denominators', () => {
    const read = readIsoGainMap(ONE_CHANNEL);
    expect(read).toEqual({
      ok: true,
      metadata: {
        channels: 1,
        useBaseColourSpace: true,
        backwardDirection: false,
        baseHdrHeadroom: 0,
        alternateHdrHeadroom: 2.5,
        gainMapMin: [-0.25, -0.25, -0.25],
        gainMapMax: [2.5, 2.5, 2.5],
        gamma: [1, 1, 1],
        baseOffset: [1 / 64, 1 / 64, 1 / 64],
        alternateOffset: [1 / 64, 1 / 64, 1 / 64],
      },
    });
  });

  it('reads three channels (bit 7) and the alternate colour space (bit 6 clear)', () => {
    const channel = (max: number): [1 | 2 | 4, number][] => [
      ...frac(-1, 8),
      ...frac(max, 4),
      ...frac(1, 2),
      ...frac(1, 100),
      ...frac(-1, 100),
    ];
    const read = readIsoGainMap(
      block(...versions(0, 3), [1, 0x80], ...frac(1, 2), ...frac(3, 1), ...channel(8), ...channel(10), ...channel(12)),
    );
    expect(read.ok && read.metadata).toMatchObject({
      channels: 3,
      useBaseColourSpace: false,
      baseHdrHeadroom: 0.5,
      alternateHdrHeadroom: 3,
      gainMapMin: [-0.125, -0.125, -0.125],
      gainMapMax: [2, 2.5, 3],
      gamma: [0.5, 0.5, 0.5],
      baseOffset: [0.01, 0.01, 0.01],
      alternateOffset: [-0.01, -0.01, -0.01],
    });
  });

  it('reads numerators over a common denominator (bit 3)', () => {
    const read = readIsoGainMap(commonBlock(64, 0, 192, -16, 128, 64, 1, 2));
    expect(read.ok && read.metadata).toMatchObject({
      channels: 1,
      baseHdrHeadroom: 0,
      alternateHdrHeadroom: 3,
      gainMapMin: [-0.25, -0.25, -0.25],
      gainMapMax: [2, 2, 2],
      gamma: [1, 1, 1],
      baseOffset: [1 / 64, 1 / 64, 1 / 64],
      alternateOffset: [1 / 32, 1 / 32, 1 / 32],
    });
  });

  it('says truncated for the versions alone (a primary block), a cut block and a cut common-denominator one', () => {
    for (const bytes of [
      block(...versions()),
      ONE_CHANNEL.subarray(0, ONE_CHANNEL.length - 1),
      commonBlock(64, 0, 192),
      // Three channels announced, one written.
      Uint8Array.of(...ONE_CHANNEL.subarray(0, 4), 0xc0, ...ONE_CHANNEL.subarray(5)),
    ])
      expect(readIsoGainMap(bytes)).toMatchObject({ ok: false, problem: 'truncated' });
  });

  it('reads a later writer version and skips what it added; refuses a later minimum version', () => {
    const later = Uint8Array.of(...ONE_CHANNEL, 1, 2, 3);
    later[3] = 7;
    expect(readIsoGainMap(later).ok).toBe(true);
    const newer = ONE_CHANNEL.slice();
    newer[1] = 1;
    expect(readIsoGainMap(newer)).toMatchObject({ ok: false, problem: 'unknown version' });
  });

  it('refuses a zero denominator, its own or the common one', () => {
    const own = ONE_CHANNEL.slice();
    new DataView(own.buffer).setUint32(5 + 8 * 2 + 4, 0); // min's denominator
    expect(readIsoGainMap(own)).toMatchObject({ ok: false, problem: 'zero denominator' });
    expect(readIsoGainMap(commonBlock(0, 0, 192, -16, 128, 64, 1, 2))).toMatchObject({
      ok: false,
      problem: 'zero denominator',
    });
  });

  it('refuses values out of range: a gamma of 0, a max below the min, −2³¹', () => {
    const at = (field: number) => 5 + 8 * 2 + 8 * field; // the numerator of a channel field
    const set = (field: number, n: number) => {
      const bytes = ONE_CHANNEL.slice();
      new DataView(bytes.buffer).setInt32(at(field), n);
      return bytes;
    };
    expect(readIsoGainMap(set(2, 0))).toMatchObject({ ok: false, problem: 'out of range' });
    expect(readIsoGainMap(set(1, -2))).toMatchObject({ ok: false, problem: 'out of range' });
    const lowest = set(0, -(2 ** 31));
    new DataView(lowest.buffer).setUint32(at(0) + 4, 1);
    expect(readIsoGainMap(lowest)).toMatchObject({ ok: false, problem: 'out of range' });
  });
});
