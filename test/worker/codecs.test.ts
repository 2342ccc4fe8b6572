// The codec layer (wasm/): each codec round-trips, instances are created lazily, given back when they
// grew past the retain limit or failed, and a fresh instance works after that.
import { describe, expect, it } from 'vitest';
import oxipngWasm from '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm';
import pngWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm';
import resizeWasm from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm';
import { unsupportedImports } from '../../wasm/bindgen.ts';
import { WASM_RETAIN_GROWTH_BYTES, resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { decodeJpeg } from './mozjpeg.ts';
import { decodePng, encodeOptimisedPng, encodePng, optimisePng } from '../../wasm/png.ts';
import { resizeImage } from '../../wasm/resize.ts';
import { hasSimd } from '../../wasm/simd.ts';
import { decodeWebp } from '../../wasm/webp.ts';
import { jpegOf, photo, webpOf } from './image-fixtures.ts';

const codec = (name: string) => wasmMemoryReport().codecs.find((c) => c.name === name)!;

describe('codecs', () => {
  it('PNG is lossless both ways, and oxipng keeps every pixel', () => {
    const image = photo(33, 17, (x) => x * 7);
    const png = encodePng(image.data, image.width, image.height);
    expect(decodePng(png)).toEqual(image);
    expect(decodePng(optimisePng(png, 2))).toEqual(image);
    const raw = encodeOptimisedPng(image, 2);
    expect(decodePng(raw)).toEqual(image);
    expect(raw.length).toBeLessThan(png.length);
  });

  it('JPEG and WebP decode to the size they were encoded at, close to the source', () => {
    const image = photo(50, 40);
    for (const decoded of [decodeJpeg(jpegOf(image, 95)), decodeWebp(webpOf(image, 95))]) {
      expect([decoded.width, decoded.height, decoded.data.length]).toEqual([50, 40, 50 * 40 * 4]);
      let error = 0;
      for (let i = 0; i < image.data.length; i++) error += Math.abs(decoded.data[i]! - image.data[i]!);
      expect(error / image.data.length).toBeLessThan(6);
    }
  });

  it('resize gives exactly the size asked for', () => {
    const out = resizeImage(photo(64, 48), 16, 12, { filter: 'lanczos3', premultiply: true, linearRgb: false });
    expect([out.width, out.height, out.data.length]).toEqual([16, 12, 16 * 12 * 4]);
  });

  it('workerd runs WebAssembly SIMD, so the SIMD WebP encoder is the one used', () => {
    expect(hasSimd()).toBe(true);
  });
});

describe('instance lifecycle', () => {
  it('instantiates lazily, once, and keeps a small instance between calls', () => {
    resetWasmInstances();
    expect(codec('png')).toMatchObject({ live: false, instantiations: 0 });
    const image = photo(8, 8);
    encodePng(image.data, 8, 8);
    encodePng(image.data, 8, 8);
    expect(codec('png')).toMatchObject({ live: true, instantiations: 1 });
    expect(codec('png').memory_bytes).toBeLessThanOrEqual(codec('png').peak_bytes);
  });

  it('drops an instance whose memory grew past the retain limit, and the next call gets a fresh one', () => {
    resetWasmInstances();
    encodePng(photo(8, 8).data, 8, 8);
    const fresh = codec('png').memory_bytes;
    const big = photo(1500, 1500); // 9 MB of RGBA: the codec's memory must grow by more than 4 MiB
    encodePng(big.data, big.width, big.height);
    expect(codec('png').live).toBe(false);
    expect(codec('png').peak_bytes).toBeGreaterThan(fresh + WASM_RETAIN_GROWTH_BYTES);
    expect(wasmMemoryReport().peak_bytes).toBeGreaterThanOrEqual(codec('png').peak_bytes);
    const small = photo(4, 4);
    expect(decodePng(encodePng(small.data, 4, 4))).toEqual(small);
    expect(codec('png')).toMatchObject({ live: true, instantiations: 2 });
    expect(codec('png').memory_bytes).toBeLessThanOrEqual(fresh + WASM_RETAIN_GROWTH_BYTES);
  });

  it('drops an instance after a failure (a trap or a decoder error) and recovers', () => {
    resetWasmInstances();
    expect(() => decodePng(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]))).toThrow();
    expect(codec('png').live).toBe(false);
    expect(() => decodeJpeg(new Uint8Array([0xff, 0xd8, 0xff, 0xdb, 0, 4, 0, 0, 0xff, 0xd9]))).toThrow();
    expect(codec('mozjpeg_dec').live).toBe(false);
    const image = photo(20, 10);
    expect(decodeJpeg(jpegOf(image)).width).toBe(20);
  });

  it('knows every import of the bundled wasm-bindgen builds, and names any it does not', () => {
    for (const module of [pngWasm, oxipngWasm, resizeWasm])
      expect(unsupportedImports(WebAssembly.Module.imports(module))).toEqual([]);
    const newer = [
      { module: 'wbg', name: '__wbindgen_throw', kind: 'function' },
      { module: 'wbg', name: '__wbg_somethingnew_0123abcd', kind: 'function' },
      { module: 'env', name: 'memory', kind: 'memory' },
    ] as WebAssembly.ModuleImportDescriptor[];
    expect(unsupportedImports(newer)).toEqual(['wbg.__wbg_somethingnew_0123abcd', 'env.memory']);
  });
});
