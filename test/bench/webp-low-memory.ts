// `npm run bench -- webp-low-memory`: libwebp's two lossy encoding loops on the corpus WebPs, against
// sharp's webp({ quality: 80 }). The engine runs in this process (as in jpeg-tuning.ts), a fresh instance
// per encode, so its WebAssembly memory after the encode is that encode's peak: decode into the picture at
// full size (sr_webp_fill), then WebPEncode at q80, method 4 (WEBP_METHOD), with config.low_memory 0
// (the token buffer: every token of the image kept, then written) and 1 (no token buffer: the image is
// coded again each pass). Only that flag differs between the two columns.
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { loadCorpus } from './lib/corpus.ts';
import { nodeEngine } from './lib/engine-node.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)

/** wasm/webp-engine.ts's WEBP_METHOD (that module imports the .wasm as a Worker module, which Node cannot). */
const METHOD = 4;
const QUALITY = 80;
const MiB = 1024 * 1024;

export interface LowMemoryEncode {
  bytes: number;
  encodeMs: number;
  /** The instance's memory after decoding into the picture and after encoding, MiB. */
  filledMb: number;
  peakMb: number;
}

export interface LowMemoryRow {
  image: string;
  megapixels: number;
  sharpBytes: number;
  tokens: LowMemoryEncode;
  lowMemory: LowMemoryEncode;
}

async function encodeOnce(input: Uint8Array, lowMemory: boolean): Promise<LowMemoryEncode> {
  // A fresh instance each time, so that its memory says what this encode needed.
  const { m, memory } = await nodeEngine();
  const inputPtr = m._malloc!(input.length);
  new Uint8Array(memory.buffer).set(input, inputPtr);
  const job = m._sr_webp_create!(inputPtr, input.length);
  const info = new Int32Array(memory.buffer, m._sr_webp_info!(job) >>> 0, 2);
  if (m._sr_webp_fill!(job, info[0]!, info[1]!, 1, 0) !== 0) throw new Error('decode failed');
  const filledMb = memory.buffer.byteLength / MiB;
  const t0 = performance.now();
  if (m._sr_webp_encode!(job, QUALITY, 0, METHOD, Number(lowMemory), 0) !== 0) throw new Error('encode failed');
  const encodeMs = performance.now() - t0;
  return { bytes: m._sr_webp_output_len!(job) >>> 0, encodeMs, filledMb, peakMb: memory.buffer.byteLength / MiB };
}

export async function benchWebpLowMemory(): Promise<LowMemoryRow[]> {
  const images = (await loadCorpus(1000)).images
    .filter((i) => i.type === 'webp')
    .sort((a, b) => b.megapixels - a.megapixels);
  const rows: LowMemoryRow[] = [];
  for (const image of images) {
    const input = new Uint8Array(readFileSync(image.path));
    const sharpBytes = (await sharp(input).webp({ quality: QUALITY }).toBuffer()).length;
    const tokens = await encodeOnce(input, false);
    const lowMemory = await encodeOnce(input, true);
    rows.push({ image: image.name, megapixels: image.megapixels, sharpBytes, tokens, lowMemory });
    console.error(
      `webp-low-memory: ${image.name}: sharp ${sharpBytes} B; token buffer ${tokens.bytes} B; low memory ${lowMemory.bytes} B`,
    );
  }
  return rows;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;

export function webpLowMemoryReport(rows: LowMemoryRow[]): string {
  const lines = [
    `libwebp's lossy encoder in the engine, q${QUALITY}, method ${METHOD}, full size, a fresh instance per encode (Node ${process.version}). ` +
      `Median bytes ÷ sharp webp({ quality: ${QUALITY} }): token buffer ${median(rows.map((r) => r.tokens.bytes / r.sharpBytes)).toFixed(3)}, ` +
      `low memory ${median(rows.map((r) => r.lowMemory.bytes / r.sharpBytes)).toFixed(3)}; median encode time low memory ÷ token buffer ` +
      `${median(rows.map((r) => r.lowMemory.encodeMs / r.tokens.encodeMs)).toFixed(2)}.`,
    '',
    '| image | MP | sharp bytes | token buffer bytes | ÷ sharp | encode ms | memory MiB (after decode → peak) | low memory bytes | ÷ sharp | encode ms | memory MiB (after decode → peak) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const cells = (e: LowMemoryEncode) => [
        e.bytes,
        (e.bytes / r.sharpBytes).toFixed(3),
        e.encodeMs.toFixed(0),
        `${e.filledMb.toFixed(1)} → ${e.peakMb.toFixed(1)}`,
      ];
      return `| ${r.image} | ${r.megapixels.toFixed(1)} | ${r.sharpBytes} | ${cells(r.tokens).join(' | ')} | ${cells(r.lowMemory).join(' | ')} |`;
    }),
  ];
  return lines.join('\n');
}
