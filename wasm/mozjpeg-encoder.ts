// MozJPEG's encoder (@jsquash/jpeg's Emscripten build): whole-image, with trellis quantisation and
// optimised progressive scans. The JPEG engine (jpeg-engine.ts) hands it the decoded, resized rows when
// the output is small enough for its memory (about 20 bytes per output pixel): there it writes fewer
// bytes than our streaming encoder at the same SSIM (README, "Benchmarks").
import encoderFactory from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import type { RgbaImage } from './image.ts';
import { Slot } from './instances.ts';

interface Encoder {
  encode(data: Uint8Array, width: number, height: number, options: MozJpegOptions): Uint8Array;
}

/** MozJPEG's options as its Embind binding requires them: every field present. */
export interface MozJpegOptions {
  quality: number;
  baseline: boolean;
  arithmetic: boolean;
  progressive: boolean;
  optimize_coding: boolean;
  smoothing: number;
  color_space: number;
  quant_table: number;
  trellis_multipass: boolean;
  trellis_opt_zero: boolean;
  trellis_opt_table: boolean;
  trellis_loops: number;
  auto_subsample: boolean;
  chroma_subsample: number;
  separate_chroma_quality: boolean;
  chroma_quality: number;
}

const encoder = new Slot('mozjpeg_enc', () => new EmscriptenInstance(encoderFactory as EmscriptenFactory<Encoder>, encoderWasm));

export function encodeJpeg(image: RgbaImage, options: MozJpegOptions): Uint8Array {
  return encoder.run((codec) => codec.module.encode(image.data, image.width, image.height, options));
}

/**
 * MozJPEG as Squoosh tunes it: progressive with optimised Huffman tables, trellis quantisation, and the
 * ImageMagick quantisation table (3), which holds up best at web qualities. Chroma is subsampled 4:2:0,
 * except at quality 90 and above where colour detail is what the caller is paying bytes for.
 */
export function jpegOptions(quality: number, grey = false): MozJpegOptions {
  return {
    quality,
    baseline: false,
    arithmetic: false,
    progressive: true,
    optimize_coding: true,
    smoothing: 0,
    color_space: grey ? 1 : 3, // greyscale or YCbCr
    quant_table: 3,
    trellis_multipass: false,
    trellis_opt_zero: false,
    trellis_opt_table: false,
    trellis_loops: 1,
    auto_subsample: false,
    chroma_subsample: quality >= 90 ? 1 : 2,
    separate_chroma_quality: false,
    chroma_quality: quality,
  };
}
