// The AVIF module (wasm/codec/sr_avif.*) run in this Node process, for the avif bench and the engine's
// tests: wasm/ imports the .wasm as a Worker module, which Node cannot, so the exports are called by name.
import { resolve } from 'node:path';
import { AVIF_DEPTH, type AvifSettings, avifGrid } from '../../../wasm/avif-settings.ts';
import { type NodeEngine, nodeModule } from './engine-node.ts';

// BENCH_AVIF_CODEC: another build's folder (holding sr_avif.js and .wasm), to compare builds.
const CODEC = process.env.BENCH_AVIF_CODEC
  ? new URL(`file://${resolve(process.env.BENCH_AVIF_CODEC)}/`)
  : new URL('../../../wasm/codec/', import.meta.url);
/**
 * The coded picture's bits a sample: BENCH_AVIF_DEPTH (8 or 10) to compare, else AVIF_DEPTH, and 8 with intra
 * block copy, as the service's plan chooses where the budget allows.
 */
export const DEPTH = Number(process.env.BENCH_AVIF_DEPTH ?? AVIF_DEPTH) as 8 | 10;
const depthOf = (settings: AvifSettings) =>
  process.env.BENCH_AVIF_DEPTH || !settings.options.some(([key, value]) => key === 'enable-intrabc' && value === '1')
    ? DEPTH
    : 8;
/** Rows handed to the module per call, as the service hands them. */
const BAND_ROWS = 16;

export interface Raw {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

/**
 * An HDR gain map for the encode (sr_avif_gain_map, as wasm/avif-engine.ts's setGainMap): 8-bit pixels of 1
 * or 3 channels, its 17 ISO 21496-1 numbers, libavif's quality for it.
 */
export interface GainMapRaw {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3;
  metadata: readonly number[];
  quality: number;
}

/** Hands the picture's rows to `put` in bands (a view of at most BAND_ROWS rows, and their count). */
export type RowBands = (put: (band: Uint8Array, rows: number) => void) => void;

/** One encode in a fresh instance, so the instance's memory afterwards is this encode's peak. */
export function encodeAvif(
  raw: Raw,
  settings: AvifSettings,
  grid = avifGrid(raw.width, raw.height),
  icc?: Uint8Array,
  gainMap?: GainMapRaw,
) {
  const stride = raw.width * raw.channels;
  const bands: RowBands = (put) => {
    for (let y = 0; y < raw.height; y += BAND_ROWS) {
      const rows = Math.min(BAND_ROWS, raw.height - y);
      put(raw.data.subarray(y * stride, (y + rows) * stride), rows);
    }
  };
  return encodeAvifBands(raw, bands, settings, grid, icc, gainMap);
}

/**
 * One encode in a fresh instance of rows that `bands` produces as they come (a decoder's, timed with the
 * encode: `ms` runs from the first band to the output).
 */
export async function encodeAvifBands(
  size: Omit<Raw, 'data'>,
  bands: RowBands,
  settings: AvifSettings,
  grid = avifGrid(size.width, size.height),
  icc?: Uint8Array,
  gainMap?: GainMapRaw,
) {
  const { m, memory } = await nodeModule(new URL('sr_avif.wasm', CODEC), new URL('sr_avif.js', CODEC).href);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const enc = m._sr_avif_create!(size.width, size.height, size.channels, grid.cols, grid.rows, depthOf(settings));
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
    if (gainMap) {
      const pixels = copyIn(gainMap.data);
      // malloc aligns to 8, as the doubles need.
      const values = copyIn(new Uint8Array(new Float64Array(gainMap.metadata).buffer));
      const set = m._sr_avif_gain_map!(
        enc,
        pixels,
        gainMap.width,
        gainMap.height,
        gainMap.channels,
        values,
        gainMap.quality,
      );
      m._free!(values);
      m._free!(pixels);
      if (set !== 0) throw new Error(`sr_avif_gain_map: ${message()}`);
    }
    const band = m._malloc!(size.width * size.channels * BAND_ROWS);
    bands((rows, count) => {
      new Uint8Array(memory.buffer).set(rows, band);
      if (m._sr_avif_rows!(enc, band, count) !== 0) throw new Error(`sr_avif_rows: ${message()}`);
    });
    m._free!(band);
    const filledBytes = memory.buffer.byteLength;
    // Cell by cell, as the service calls it (the slowest cell is what another request may wait for); a
    // build from before the steps (BENCH_AVIF_CODEC) encodes in one call.
    const cellsMs: number[] = [];
    if (m._sr_avif_encode_begin) {
      if (m._sr_avif_encode_begin(enc, settings.quality, settings.speed) !== 0)
        throw new Error(`sr_avif_encode_begin: ${message()}`);
      for (let left = 1; left > 0; ) {
        const c0 = performance.now();
        left = m._sr_avif_encode_cell!(enc);
        cellsMs.push(performance.now() - c0);
        if (left < 0) throw new Error(`sr_avif_encode_cell: ${message()}`);
      }
      if (m._sr_avif_encode_finish!(enc) !== 0) throw new Error(`sr_avif_encode_finish: ${message()}`);
    } else if (m._sr_avif_encode!(enc, settings.quality, settings.speed) !== 0) {
      throw new Error(`sr_avif_encode: ${message()}`);
    }
    const ptr = m._sr_avif_output!(enc) >>> 0;
    const output = new Uint8Array(memory.buffer).slice(ptr, ptr + m._sr_avif_output_len!(enc));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      output,
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      /** Each cell's encode, in ms (the longest is what another request may wait for). */
      cellsMs,
      filledBytes,
      peakBytes: memory.buffer.byteLength,
      grid,
    };
  } finally {
    m._sr_avif_destroy!(enc);
  }
}

/**
 * The engine's upright rows of a JPEG at `width` × `height` (after orientation), as the service pulls
 * them: DCT-scaled decode, the resampler, the EXIF orientation; handed on in bands of BAND_ROWS.
 */
export function jpegRowBands(
  e: NodeEngine,
  input: Uint8Array,
  out: { width: number; height: number; scaleNum: number; orientation: number },
): RowBands {
  return (put) => {
    const { m, memory } = e;
    const inputPtr = m._malloc!(input.length);
    new Uint8Array(memory.buffer).set(input, inputPtr);
    const job = m._sr_job_create!(inputPtr, input.length);
    const stride = out.width * 3;
    const buffer = m._malloc!(stride * BAND_ROWS);
    try {
      if (m._sr_job_header!(job) !== 0) throw new Error('header refused');
      m._sr_job_close_header!(job);
      const [stored_w, stored_h] = out.orientation >= 5 ? [out.height, out.width] : [out.width, out.height];
      if (m._sr_job_set_pixels!(job, out.scaleNum, stored_w, stored_h, out.orientation) !== 0)
        throw new Error('pixel settings refused');
      if (m._sr_job_channels!(job) !== 3) throw new Error('only colour photos');
      if (m._sr_job_pull_begin!(job) < 0) throw new Error('pull_begin failed');
      for (let y = 0; y < out.height; ) {
        const n = m._sr_job_pull!(job, buffer, BAND_ROWS);
        if (n <= 0) throw new Error('the decoder stopped early');
        put(new Uint8Array(memory.buffer, buffer, n * stride), n);
        y += n;
      }
    } finally {
      m._free!(buffer);
      m._sr_job_destroy!(job);
      m._free!(inputPtr);
    }
  };
}
