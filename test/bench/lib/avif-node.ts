// The AVIF module (wasm/codec/sr_avif.*) run in this Node process, for the avif bench and the engine's
// tests: wasm/ imports the .wasm as a Worker module, which Node cannot, so the exports are called by name.
import { resolve } from 'node:path';
import { type AvifSettings, avifGrid } from '../../../wasm/avif-settings.ts';
import { nodeModule } from './engine-node.ts';

// BENCH_AVIF_CODEC: another build's folder (holding sr_avif.js and .wasm), to compare builds.
const CODEC = process.env.BENCH_AVIF_CODEC
  ? new URL(`file://${resolve(process.env.BENCH_AVIF_CODEC)}/`)
  : new URL('../../../wasm/codec/', import.meta.url);
/** Rows handed to the module per call, as the service hands them. */
const BAND_ROWS = 16;

export interface Raw {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

/** One encode in a fresh instance, so the instance's memory afterwards is this encode's peak. */
export async function encodeAvif(
  raw: Raw,
  settings: AvifSettings,
  grid = avifGrid(raw.width, raw.height),
  icc?: Uint8Array,
) {
  const { m, memory } = await nodeModule(new URL('sr_avif.wasm', CODEC), new URL('sr_avif.js', CODEC).href);
  const t0 = performance.now();
  const enc = m._sr_avif_create!(raw.width, raw.height, raw.channels, grid.cols, grid.rows);
  if (!enc) throw new Error('sr_avif_create failed');
  const message = () =>
    new TextDecoder().decode(new Uint8Array(memory.buffer, m._sr_avif_message!(enc) >>> 0, 256)).replace(/\0.*$/s, '');
  const copyIn = (bytes: Uint8Array) => {
    const ptr = m._malloc!(bytes.length);
    new Uint8Array(memory.buffer).set(bytes, ptr);
    return ptr;
  };
  try {
    for (const [key, value] of settings.options) {
      const ptr = copyIn(new TextEncoder().encode(`${key}\0${value}\0`));
      const set = m._sr_avif_option!(enc, ptr, ptr + key.length + 1);
      m._free!(ptr);
      if (set !== 0) throw new Error(`sr_avif_option ${key}=${value} refused`);
    }
    if (icc) {
      const ptr = copyIn(icc);
      const set = m._sr_avif_icc!(enc, ptr, icc.length);
      m._free!(ptr);
      if (set !== 0) throw new Error(`sr_avif_icc: ${message()}`);
    }
    const stride = raw.width * raw.channels;
    const band = m._malloc!(stride * BAND_ROWS);
    for (let y = 0; y < raw.height; y += BAND_ROWS) {
      const rows = Math.min(BAND_ROWS, raw.height - y);
      new Uint8Array(memory.buffer).set(raw.data.subarray(y * stride, (y + rows) * stride), band);
      if (m._sr_avif_rows!(enc, band, rows) !== 0) throw new Error(`sr_avif_rows: ${message()}`);
    }
    m._free!(band);
    const filledBytes = memory.buffer.byteLength;
    if (m._sr_avif_encode!(enc, settings.quality, settings.speed) !== 0)
      throw new Error(`sr_avif_encode: ${message()}`);
    const ptr = m._sr_avif_output!(enc) >>> 0;
    const output = new Uint8Array(memory.buffer).slice(ptr, ptr + m._sr_avif_output_len!(enc));
    const ms = performance.now() - t0;
    return { output, ms, filledBytes, peakBytes: memory.buffer.byteLength, grid };
  } finally {
    m._sr_avif_destroy!(enc);
  }
}
