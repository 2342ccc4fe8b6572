// The JPEG XL module (wasm/codec/sr_jxl.*) run in this Node process, for the jxl and quality-scale benches:
// wasm/ imports the .wasm as a Worker module, which Node cannot, so the exports are called by name. Each
// encode runs in a fresh instance, so the instance's memory afterwards is that encode's peak.
// BENCH_JXL_CODEC (a folder holding sr_jxl.js and sr_jxl.wasm) runs another build of the module, for
// trying a glue change without replacing the service's.
import { nodeModule } from './engine-node.ts';
import type { Raw } from './avif-node.ts';

export const JXL_CODEC = process.env.BENCH_JXL_CODEC
  ? new URL(`file://${process.env.BENCH_JXL_CODEC.replace(/\/?$/, '/')}`)
  : new URL('../../../wasm/codec/', import.meta.url);
const CODEC = JXL_CODEC;
/** Rows handed to the module per call, as the service hands them (JXL_BAND_ROWS). */
const BAND_ROWS = 32;

export interface JxlEncoded {
  output: Uint8Array;
  ms: number;
  /** The instance's memory once the rows are in, and at the end (the encode's peak). */
  filledBytes: number;
  peakBytes: number;
}

const fresh = () => nodeModule(new URL('sr_jxl.wasm', CODEC), new URL('sr_jxl.js', CODEC).href);

/** libjxl frame settings (JxlEncoderFrameSettingId, value) beyond distance and effort, for trials. */
export type JxlOptions = ReadonlyArray<readonly [id: number, value: number]>;

/**
 * `raw` as a lossy JXL at libjxl's `distance` and `effort`, fed in bands as the service feeds it; `options`
 * need a module whose glue exports sr_jxl_option (a trial build, BENCH_JXL_CODEC).
 */
export async function encodeJxl(
  raw: Raw,
  distance: number,
  effort: number,
  icc?: Uint8Array,
  options: JxlOptions = [],
): Promise<JxlEncoded> {
  const { m, memory } = await fresh();
  const t0 = performance.now();
  const enc = m._sr_jxl_create!(raw.width, raw.height, raw.channels);
  if (!enc) throw new Error('sr_jxl_create failed');
  const message = () =>
    new TextDecoder().decode(new Uint8Array(memory.buffer, m._sr_jxl_message!(enc) >>> 0, 256)).replace(/\0.*$/s, '');
  try {
    if (icc) {
      const ptr = m._malloc!(icc.length);
      new Uint8Array(memory.buffer).set(icc, ptr);
      const set = m._sr_jxl_icc!(enc, ptr, icc.length);
      m._free!(ptr);
      if (set !== 0) throw new Error(`sr_jxl_icc: ${message()}`);
    }
    if (options.length && !m._sr_jxl_option) throw new Error('this sr_jxl module takes no frame settings');
    for (const [id, value] of options)
      if (m._sr_jxl_option!(enc, id, value) !== 0) throw new Error(`sr_jxl_option ${id}=${value}: ${message()}`);
    const stride = raw.width * raw.channels;
    const band = m._malloc!(stride * BAND_ROWS);
    for (let y = 0; y < raw.height; y += BAND_ROWS) {
      const rows = Math.min(BAND_ROWS, raw.height - y);
      new Uint8Array(memory.buffer).set(raw.data.subarray(y * stride, (y + rows) * stride), band);
      if (m._sr_jxl_rows!(enc, band, rows) !== 0) throw new Error(`sr_jxl_rows: ${message()}`);
    }
    m._free!(band);
    const filledBytes = memory.buffer.byteLength;
    if (m._sr_jxl_encode!(enc, distance, effort) !== 0) throw new Error(`sr_jxl_encode: ${message()}`);
    const ptr = m._sr_jxl_output!(enc) >>> 0;
    const output = new Uint8Array(memory.buffer).slice(ptr, ptr + m._sr_jxl_output_len!(enc));
    return { output, ms: performance.now() - t0, filledBytes, peakBytes: memory.buffer.byteLength };
  } finally {
    m._sr_jxl_destroy!(enc);
  }
}

/** A JPEG as a lossless JXL (the jbrd box kept), as format=jxl&lossless=true writes it. */
export async function transcodeJpegToJxl(jpeg: Uint8Array, effort: number): Promise<JxlEncoded> {
  const { m, memory } = await fresh();
  const t0 = performance.now();
  const enc = m._sr_jxl_create_empty!();
  const input = m._malloc!(jpeg.length);
  new Uint8Array(memory.buffer).set(jpeg, input);
  const filledBytes = memory.buffer.byteLength;
  try {
    if (m._sr_jxl_jpeg!(enc, input, jpeg.length, effort) !== 0) {
      const text = new TextDecoder().decode(new Uint8Array(memory.buffer, m._sr_jxl_message!(enc) >>> 0, 256));
      throw new Error(`sr_jxl_jpeg: ${text.replace(/\0.*$/s, '')}`);
    }
    const ptr = m._sr_jxl_output!(enc) >>> 0;
    const output = new Uint8Array(memory.buffer).slice(ptr, ptr + m._sr_jxl_output_len!(enc));
    return { output, ms: performance.now() - t0, filledBytes, peakBytes: memory.buffer.byteLength };
  } finally {
    m._free!(input);
    m._sr_jxl_destroy!(enc);
  }
}
