// The face detector's C (wasm/src/sr_face.c) against a reference written apart from it: the network of
// wasm/face/blazeface-front.srf run op by op in plain JavaScript, in double precision, on the same input
// (the astronaut fixture, letterboxed to 128 × 128). Every anchor's logit and box must agree.
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { MAGIC, OP, OP_WORDS } from '../../src/cli/face-model.ts';
import { nodeModule } from '../bench/lib/engine-node.ts';

const SIDE = 128;
const ANCHORS = 896;

interface Tensor {
  h: number;
  w: number;
  c: number;
  data: Float64Array;
}

function half(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The network as the file describes it, run on `input` (HWC, 128 × 128 × 3): per anchor, logit then 16 regressors. */
function reference(file: Uint8Array, input: Float32Array): Float64Array {
  expect(new TextDecoder().decode(file.subarray(0, 8))).toBe(MAGIC);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const word = (i: number) => view.getUint32(8 + i * 4, true);
  const [nOps, nTensors, nWeights] = [word(0), word(1), word(2)];
  const ops = Array.from({ length: nOps }, (_, i) =>
    Array.from({ length: OP_WORDS }, (_, k) => word(3 + i * OP_WORDS + k)),
  );
  const shapes = Array.from({ length: nTensors }, (_, t) =>
    [0, 1, 2].map((k) => word(3 + nOps * OP_WORDS + t * 3 + k)),
  );
  const base = 8 + (3 + nOps * OP_WORDS + nTensors * 3) * 4;
  const weights = Float64Array.from({ length: nWeights }, (_, i) => half(view.getUint16(base + i * 2, true)));
  const tensors: Tensor[] = shapes.map(([h, w, c]) => ({ h: h!, w: w!, c: c!, data: new Float64Array(h! * w! * c!) }));
  tensors[0]!.data.set(input);
  const outputs: Tensor[] = [];
  const same = (n: number, out: number, k: number, stride: number) => Math.max(0, ((out - 1) * stride + k - n) >> 1);
  for (const op of ops) {
    const [code, o, i, j, kh, kw, cin, cout, stride, relu, wOff, bOff, padSame] = op as number[] as [
      number,
      ...number[],
    ];
    const a = tensors[i!]!;
    const out = tensors[o!]!;
    const at = (t: Tensor, y: number, x: number, ch: number) => t.data[(y * t.w + x) * t.c + ch]!;
    if (code === OP.output) {
      outputs[j!] = a;
      continue;
    }
    for (let y = 0; y < out.h; y++)
      for (let x = 0; x < out.w; x++)
        for (let co = 0; co < out.c; co++) {
          let v = 0;
          if (code === OP.conv || code === OP.depthwise) {
            const py = padSame ? same(a.h, out.h, kh!, stride!) : 0;
            const px = padSame ? same(a.w, out.w, kw!, stride!) : 0;
            v = code === OP.conv ? weights[bOff! + co]! : 0;
            for (let ky = 0; ky < kh!; ky++) {
              const sy = y * stride! + ky - py;
              if (sy < 0 || sy >= a.h) continue;
              for (let kx = 0; kx < kw!; kx++) {
                const sx = x * stride! + kx - px;
                if (sx < 0 || sx >= a.w) continue;
                const s0 = (sy * a.w + sx) * a.c;
                if (code === OP.depthwise) v += a.data[s0 + co]! * weights[wOff! + (ky * kw! + kx) * cin! + co]!;
                else {
                  const w0 = wOff! + (ky * kw! + kx) * cin! * cout! + co;
                  for (let ci = 0; ci < cin!; ci++) v += a.data[s0 + ci]! * weights[w0 + ci * cout!]!;
                }
              }
            }
            if (relu) v = Math.max(0, v);
          } else if (code === OP.add) v = at(a, y, x, co) + at(tensors[j!]!, y, x, co);
          else if (code === OP.relu) v = Math.max(0, at(a, y, x, co));
          else if (code === OP.pad) v = co < a.c ? at(a, y, x, co) : 0;
          else if (code === OP.maxpool)
            v = Math.max(
              at(a, 2 * y, 2 * x, co),
              at(a, 2 * y, 2 * x + 1, co),
              at(a, 2 * y + 1, 2 * x, co),
              at(a, 2 * y + 1, 2 * x + 1, co),
            );
          else throw new Error(`op ${code}`);
          out.data[(y * out.w + x) * out.c + co] = v;
        }
  }
  const raw = new Float64Array(ANCHORS * 17);
  for (let n = 0; n < ANCHORS; n++) {
    const [score, boxes, k] = n < 512 ? [outputs[0]!, outputs[1]!, n] : [outputs[2]!, outputs[3]!, n - 512];
    raw[n * 17] = score.data[k]!;
    raw.set(boxes.data.subarray(k * 16, k * 16 + 16), n * 17 + 1);
  }
  return raw;
}

describe('the face network in C', () => {
  it('agrees with a JavaScript reference on every anchor of a photo', async () => {
    const file = new Uint8Array(readFileSync(new URL('../../wasm/face/blazeface-front.srf', import.meta.url)));
    // The fixture (360 × 180) letterboxed: 128 × 64 in the middle rows, black (−1) above and below.
    const { data } = await sharp(readFileSync(new URL('../fixtures/faces/astronaut-left.jpg', import.meta.url)))
      .resize(SIDE, SIDE / 2)
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const input = new Float32Array(SIDE * SIDE * 3).fill(-1);
    for (let i = 0; i < data.length; i++) input[(SIDE / 4) * SIDE * 3 + i] = data[i]! / 127.5 - 1;

    const expected = reference(file, input);
    const { m, memory } = await nodeModule(
      new URL('../../wasm/codec/sr_face.wasm', import.meta.url),
      new URL('../../wasm/codec/sr_face.js', import.meta.url).href,
    );
    const ptr = m._malloc!(input.byteLength);
    new Float32Array(memory.buffer, ptr, input.length).set(input);
    const out = m._sr_face_network!(ptr) >>> 0;
    expect(out).not.toBe(0);
    const actual = new Float32Array(memory.buffer, out, ANCHORS * 17);

    let worst = 0;
    for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    // float32 against float64 over 87 ops (logits run to ±30, box offsets to ±100): 5.7e-4 at most here.
    expect(worst, `largest difference ${worst}`).toBeLessThan(2e-3);
    // The face is found by both, on the same anchor.
    const best = (raw: ArrayLike<number>) => {
      let at = 0;
      for (let n = 1; n < ANCHORS; n++) if (raw[n * 17]! > raw[at * 17]!) at = n;
      return at;
    };
    expect(best(actual)).toBe(best(expected));
    expect(expected[best(expected) * 17]).toBeGreaterThan(2); // sigmoid > 0.88
  });
});
