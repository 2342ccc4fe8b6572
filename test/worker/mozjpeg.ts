// MozJPEG (@jsquash/jpeg's Emscripten builds), for the tests only: a JPEG decoder independent of the
// engine in wasm/, to cross-check what the engine writes, and an encoder independent of it for fixtures
// (the service itself writes every JPEG with the engine since its trellis quantisation).
import decoderFactory from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import encoderFactory from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from '../../wasm/emscripten.ts';
import { bytesOf, rgbaImage, type RgbaImage } from '../../wasm/image.ts';
import { Slot } from '../../wasm/instances.ts';

interface Decoder {
  decode(
    data: Uint8Array,
    preserveOrientation: boolean,
  ): { data: Uint8ClampedArray; width: number; height: number } | null;
}

const decoder = new Slot(
  'mozjpeg_dec',
  () => new EmscriptenInstance(decoderFactory as EmscriptenFactory<Decoder>, decoderWasm),
);

/** Decodes a baseline or progressive JPEG to RGBA, as stored (EXIF orientation is not applied). */
export function decodeJpeg(bytes: Uint8Array): RgbaImage {
  const image = decoder.run((codec) => codec.module.decode(bytes, false));
  if (!image) throw new Error('MozJPEG could not decode the image');
  return rgbaImage(bytesOf(image.data), image.width, image.height);
}

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

const encoder = new Slot(
  'mozjpeg_enc',
  () => new EmscriptenInstance(encoderFactory as EmscriptenFactory<Encoder>, encoderWasm),
);

export function encodeJpeg(image: RgbaImage, options: MozJpegOptions): Uint8Array {
  return encoder.run((codec) => codec.module.encode(image.data, image.width, image.height, options));
}

/** MozJPEG as Squoosh tunes it (progressive, trellis, the ImageMagick table), 4:2:0 below quality 90. */
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
