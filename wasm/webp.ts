// libwebp decode and encode (@jsquash/webp's Emscripten builds; the SIMD encoder where the runtime has
// SIMD, which workerd does).
import decoderFactory from '@jsquash/webp/codec/dec/webp_dec.js';
import decoderWasm from '@jsquash/webp/codec/dec/webp_dec.wasm';
import encoderFactory from '@jsquash/webp/codec/enc/webp_enc.js';
import encoderWasm from '@jsquash/webp/codec/enc/webp_enc.wasm';
import simdEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js';
import simdEncoderWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { bytesOf, rgbaImage, type RgbaImage } from './image.ts';
import { Slot } from './instances.ts';
import { hasSimd } from './simd.ts';

interface Decoder {
  decode(data: Uint8Array): { data: Uint8ClampedArray; width: number; height: number } | null;
}
interface Encoder {
  encode(data: Uint8Array, width: number, height: number, options: WebpOptions): Uint8Array | null;
}

/** libwebp's `WebPConfig` as the Embind binding requires it: every field present. */
export interface WebpOptions {
  quality: number;
  target_size: number;
  target_PSNR: number;
  method: number;
  sns_strength: number;
  filter_strength: number;
  filter_sharpness: number;
  filter_type: number;
  partitions: number;
  segments: number;
  pass: number;
  show_compressed: number;
  preprocessing: number;
  autofilter: number;
  partition_limit: number;
  alpha_compression: number;
  alpha_filtering: number;
  alpha_quality: number;
  lossless: number;
  exact: number;
  image_hint: number;
  emulate_jpeg_size: number;
  thread_level: number;
  low_memory: number;
  near_lossless: number;
  use_delta_palette: number;
  use_sharp_yuv: number;
}

const decoder = new Slot(
  'webp_dec',
  () => new EmscriptenInstance(decoderFactory as EmscriptenFactory<Decoder>, decoderWasm),
);
const encoder = new Slot('webp_enc', () =>
  hasSimd()
    ? new EmscriptenInstance(simdEncoderFactory as EmscriptenFactory<Encoder>, simdEncoderWasm)
    : new EmscriptenInstance(encoderFactory as EmscriptenFactory<Encoder>, encoderWasm),
);

/** Decodes a lossy or lossless still WebP to RGBA. */
export function decodeWebp(bytes: Uint8Array): RgbaImage {
  const image = decoder.run((codec) => codec.module.decode(bytes));
  if (!image) throw new Error('libwebp could not decode the image');
  return rgbaImage(bytesOf(image.data), image.width, image.height);
}

export function encodeWebp(image: RgbaImage, options: WebpOptions): Uint8Array {
  const out = encoder.run((codec) => codec.module.encode(image.data, image.width, image.height, options));
  if (!out) throw new Error('libwebp could not encode the image');
  return out;
}
