// Test images made on the spot: a gradient under seeded noise, so the encoders have real work to do
// and every run uploads the same bytes.
import sharp from 'sharp';
import { xorshiftNoise } from '../../bench/lib/prng.ts';

export const WIDTH = 640;
export const HEIGHT = 480;

function pixels(seed: number): Buffer {
  const data = Buffer.alloc(WIDTH * HEIGHT * 3);
  const noise = xorshiftNoise(seed, 24);
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const i = (y * WIDTH + x) * 3;
      data[i] = Math.max(0, Math.min(255, Math.round((x / WIDTH) * 255) + noise()));
      data[i + 1] = Math.max(0, Math.min(255, Math.round((y / HEIGHT) * 255) + noise()));
      data[i + 2] = Math.max(0, Math.min(255, 128 + noise()));
    }
  }
  return data;
}

const raw = (seed: number) => sharp(pixels(seed), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } });

export const gradientPng = (): Promise<Buffer> => raw(1).png().toBuffer();
export const gradientJpeg = (): Promise<Buffer> => raw(2).jpeg({ quality: 92 }).toBuffer();
