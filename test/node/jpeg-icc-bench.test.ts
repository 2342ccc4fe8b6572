// The camera bench scores the engine's output as a viewer sees what the service returns: with the input's
// ICC profile (the service keeps it; the engine's bare encode in the bench writes no markers). Without it
// a photo carrying a camera's profile was scored against a colour-managed reference and lost 9–18
// SSIMULACRA2 points that no viewer sees.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { engineJpegFromJpeg, nodeEngine } from '../bench/lib/engine-node.ts';
import { withIcc } from '../bench/lib/jpeg-icc.ts';

const SIZE = 256;

/** A saturated gradient: where a wide-gamut profile moves sRGB values most. */
function pixels(): Buffer {
  const rgb = Buffer.alloc(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++) for (let x = 0; x < SIZE; x++) rgb.set([x, 255 - y, (x + y) >> 1], (y * SIZE + x) * 3);
  return rgb;
}

const srgb = (jpeg: Uint8Array) => sharp(jpeg).toColourspace('srgb').raw().toBuffer();

function meanSquared(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum / a.length;
}

describe('the camera bench carries the input ICC profile onto the output it scores', () => {
  it('decodes to the same colours as the input with a Display P3 profile, and not without', async () => {
    const input = new Uint8Array(
      await sharp(pixels(), { raw: { width: SIZE, height: SIZE, channels: 3 } })
        .withIccProfile('p3')
        .jpeg({ quality: 95 })
        .toBuffer(),
    );
    const output = engineJpegFromJpeg(await nodeEngine(), input, 90, { subsample: false });
    const reference = await srgb(input);
    expect(meanSquared(await srgb(withIcc(output, input)), reference)).toBeLessThan(2);
    expect(meanSquared(await srgb(output), reference)).toBeGreaterThan(10);
    expect((await sharp(withIcc(output, input)).metadata()).icc?.length).toBe(
      (await sharp(input).metadata()).icc?.length,
    );
  });

  it('leaves an output alone when the input has no profile', async () => {
    const input = new Uint8Array(
      await sharp(pixels(), { raw: { width: SIZE, height: SIZE, channels: 3 } })
        .jpeg()
        .toBuffer(),
    );
    const output = engineJpegFromJpeg(await nodeEngine(), input, 80);
    expect(withIcc(output, input)).toBe(output);
  });
});
