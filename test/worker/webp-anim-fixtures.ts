// Animated WebP as the tests read it: its chunks (loop count, frames with their rectangles, durations,
// blend and disposal), and its frames composed as a WebP player composes them, each frame's payload
// decoded by the still decoder; and how far two RGBA frames differ.
import { expect } from 'vitest';
import { decodeWebp } from '../../wasm/webp.ts';

const u24 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32 = (b: Uint8Array, at: number): number => (u24(b, at) | (b[at + 3]! << 24)) >>> 0;
const fourcc = (b: Uint8Array, at: number): string => String.fromCharCode(...b.subarray(at, at + 4));

interface Chunk {
  id: string;
  data: Uint8Array;
}

function chunksOf(b: Uint8Array, from: number, to: number): Chunk[] {
  const out: Chunk[] = [];
  for (let at = from; at + 8 <= to; ) {
    const size = u32(b, at + 4);
    out.push({ id: fourcc(b, at), data: b.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size & 1);
  }
  return out;
}

export interface AnimatedWebp {
  loop: number;
  frames: {
    x: number;
    y: number;
    width: number;
    height: number;
    duration: number;
    blend: boolean;
    dispose: boolean;
    payload: Chunk[];
  }[];
}

export function readAnimatedWebp(b: Uint8Array): AnimatedWebp {
  expect(fourcc(b, 0) + fourcc(b, 8)).toBe('RIFFWEBP');
  const chunks = chunksOf(b, 12, b.length);
  expect(chunks[0]!.id).toBe('VP8X');
  expect(chunks[0]!.data[0]! & 0x02).toBe(0x02); // the animation flag
  const anim = chunks.find((c) => c.id === 'ANIM')!;
  expect(anim).toBeDefined();
  const frames = chunks
    .filter((c) => c.id === 'ANMF')
    .map(({ data }) => ({
      x: u24(data, 0) * 2,
      y: u24(data, 3) * 2,
      width: u24(data, 6) + 1,
      height: u24(data, 9) + 1,
      duration: u24(data, 12),
      blend: (data[15]! & 0x02) === 0,
      dispose: (data[15]! & 0x01) === 1,
      payload: chunksOf(data, 16, data.length),
    }));
  return { loop: anim.data[4]! | (anim.data[5]! << 8), frames };
}

/** A frame's payload (VP8L, or ALPH and VP8) as a still WebP file the still decoder reads. */
export function stillOf(frame: AnimatedWebp['frames'][number]): Uint8Array {
  const parts: number[] = [];
  const push = (id: string, data: Uint8Array) => {
    const size = data.length;
    parts.push(...[...id].map((c) => c.charCodeAt(0)), size & 255, (size >> 8) & 255, (size >> 16) & 255, size >>> 24);
    parts.push(...data);
    if (size & 1) parts.push(0);
  };
  const alpha = frame.payload.some((c) => c.id === 'ALPH');
  if (alpha) {
    const w = frame.width - 1;
    const h = frame.height - 1;
    push('VP8X', Uint8Array.of(0x10, 0, 0, 0, w & 255, (w >> 8) & 255, w >> 16, h & 255, (h >> 8) & 255, h >> 16));
  }
  for (const c of frame.payload) push(c.id, c.data);
  const size = parts.length + 4;
  return Uint8Array.from(
    [...'RIFF']
      .map((c) => c.charCodeAt(0))
      .concat(
        [size & 255, (size >> 8) & 255, (size >> 16) & 255, size >>> 24],
        [...'WEBP'].map((c) => c.charCodeAt(0)),
        parts,
      ),
  );
}

/** Every frame composed on a transparent canvas as a WebP player does (blend with alpha, dispose to transparent). */
export function composedFrames(webp: AnimatedWebp, width: number, height: number): Uint8Array[] {
  const canvas = new Uint8Array(width * height * 4);
  const shown: Uint8Array[] = [];
  for (const frame of webp.frames) {
    const { data } = decodeWebp(stillOf(frame));
    for (let y = 0; y < frame.height; y++) {
      for (let x = 0; x < frame.width; x++) {
        const s = (y * frame.width + x) * 4;
        const d = ((frame.y + y) * width + frame.x + x) * 4;
        const a = data[s + 3]!;
        if (!frame.blend || a === 255) canvas.set(data.subarray(s, s + 4), d);
        else if (a > 0) {
          // Over what is there (the GIF's frames have no partial alpha; kept general).
          const da = canvas[d + 3]!;
          const oa = a + (da * (255 - a)) / 255;
          for (let c = 0; c < 3; c++)
            canvas[d + c] = Math.round((data[s + c]! * a + (canvas[d + c]! * da * (255 - a)) / 255) / oa);
          canvas[d + 3] = Math.round(oa);
        }
      }
    }
    shown.push(canvas.slice());
    if (frame.dispose)
      for (let y = 0; y < frame.height; y++)
        canvas.fill(0, ((frame.y + y) * width + frame.x) * 4, ((frame.y + y) * width + frame.x + frame.width) * 4);
  }
  return shown;
}

/** The largest difference of a visible pixel's channels (alpha always; colour where either is visible). */
export function maxDifference(actual: Uint8Array, expected: Uint8Array): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i += 4) {
    worst = Math.max(worst, Math.abs(actual[i + 3]! - expected[i + 3]!));
    if (expected[i + 3] === 0 && actual[i + 3] === 0) continue;
    for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(actual[i + c]! - expected[i + c]!));
  }
  return worst;
}

/** Mean difference of the channels of pixels visible in either (alpha everywhere). */
export function meanDifference(actual: Uint8Array, expected: Uint8Array): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < expected.length; i += 4) {
    const visible = expected[i + 3] !== 0 || actual[i + 3] !== 0;
    for (let c = visible ? 0 : 3; c < 4; c++, n++) sum += Math.abs(actual[i + c]! - expected[i + c]!);
  }
  return sum / n;
}
