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
import type { MozJpegOptions } from './mozjpeg-options.ts';

export { jpegOptions, type MozJpegOptions } from './mozjpeg-options.ts';

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

const encoder = new Slot(
  'mozjpeg_enc',
  () => new EmscriptenInstance(encoderFactory as EmscriptenFactory<Encoder>, encoderWasm),
);

export function encodeJpeg(image: RgbaImage, options: MozJpegOptions): Uint8Array {
  return encoder.run((codec) => codec.module.encode(image.data, image.width, image.height, options));
}
