// MozJPEG's decoder (@jsquash/jpeg's Emscripten build), for the tests only: a JPEG decoder independent of
// the engine in wasm/, to cross-check what the engine writes; its encoder makes the fixtures.
import decoderFactory from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from '../../wasm/emscripten.ts';
import { bytesOf, rgbaImage, type RgbaImage } from '../../wasm/image.ts';
import { Slot } from '../../wasm/instances.ts';

interface Decoder {
  decode(data: Uint8Array, preserveOrientation: boolean): { data: Uint8ClampedArray; width: number; height: number } | null;
}

const decoder = new Slot('mozjpeg_dec', () => new EmscriptenInstance(decoderFactory as EmscriptenFactory<Decoder>, decoderWasm));

/** Decodes a baseline or progressive JPEG to RGBA, as stored (EXIF orientation is not applied). */
export function decodeJpeg(bytes: Uint8Array): RgbaImage {
  const image = decoder.run((codec) => codec.module.decode(bytes, false));
  if (!image) throw new Error('MozJPEG could not decode the image');
  return rgbaImage(bytesOf(image.data), image.width, image.height);
}

export { encodeJpeg, jpegOptions } from '../../wasm/mozjpeg-encoder.ts';
