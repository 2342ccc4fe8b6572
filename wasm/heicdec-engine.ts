// The HEIC decoder (wasm/src/sr_heicdec.c, built by wasm/build-heicdec.sh from libheif and libde265, both
// LGPL-3+): a module of its own, instantiated only when a HEIC comes in. The file is parsed, then decoded
// a tile (a grid cell) per call with a give-way between them into a band one tile high, whose rows are
// handed on before the next tile row is decoded: memory grows with the width, not the height. A picture
// that is not a grid is decoded whole but kept as YCbCr planes, its rows converted to RGBA one at a time.
import createHeicDecModule from './codec/sr_heicdec.js';
import heicDecWasm from './codec/sr_heicdec.wasm';
import { BorrowedInstance } from './borrowed.ts';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { giveWay } from './give-way.ts';
import { HeicDecodeError, HeicUnsupportedError } from './heicdec-error.ts';
import { pooledGrowthLimit, Slot } from './instances.ts';

type Fn = (...args: number[]) => number;
interface HeicDecModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_heicdec_${string}`]: Fn;
}

export { HeicDecodeError, HeicUnsupportedError };

/** What sr_heicdec_info answers (the SR_INFO_* of sr_heicdec.c). */
const INFO = {
  width: 0,
  height: 1,
  columns: 2,
  rows: 3,
  tileWidth: 4,
  tileHeight: 5,
  alpha: 6,
  depth: 7,
  colour: 8,
  iccSize: 9,
  exifSize: 10,
  xmpSize: 11,
  transfer: 12,
} as const;

/**
 * How the colours reach the output (SR_COLOUR_*): as they are (sRGB or the file's ICC), Display P3 by nclx, or
 * converted to sRGB (BT.2020 primaries; PQ or HLG tone-mapped: wasm/src/sr_hdr.h).
 */
export type HeicColour = 'as-is' | 'display-p3' | 'to-srgb';
const COLOURS: HeicColour[] = ['as-is', 'display-p3', 'to-srgb'];

export interface HeicDecodedInfo {
  /** The coded picture (ispe), before the clean aperture and orientation. */
  width: number;
  height: number;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
  alpha: boolean;
  depth: number;
  colour: HeicColour;
  /** nclx transfer characteristics (16 PQ, 18 HLG; 2, unspecified, without nclx or with an ICC profile). */
  transfer: number;
}

export const heicDecSlot = new Slot(
  'sr_heicdec',
  () => new EmscriptenInstance(createHeicDecModule as EmscriptenFactory<HeicDecModule>, heicDecWasm, pooledGrowthLimit),
  { pooled: true },
);

/** The rows wanted from the coded picture: the clean aperture's rectangle. */
export interface HeicCrop {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * One HEIC being decoded: the instance is borrowed (alone: libheif's context lives between the calls)
 * until `close`, which must be called.
 */
export class HeicDecoder extends BorrowedInstance<HeicDecModule> {
  private readonly decoder: number;
  readonly info: HeicDecodedInfo;

  /** `maxPixels`: what the boxes declare, which the plan counted; libheif refuses a larger picture or tile. */
  constructor(bytes: Uint8Array, maxPixels: number) {
    super(heicDecSlot, true);
    this.decoder = this.own(this.call('create') >>> 0, (ptr) => this.call('destroy', ptr));
    this.info = this.closeOnThrow(() => {
      if (!this.decoder) throw new HeicDecodeError('out of memory for the decoder');
      const input = this.copyIn(bytes);
      if (!input) throw new HeicDecodeError('out of memory for the file');
      const parsed = this.call('parse', this.decoder, input, bytes.length, maxPixels);
      if (parsed === -2) throw new HeicUnsupportedError(this.message());
      if (parsed !== 0) throw new HeicDecodeError(this.message());
      const at = (key: keyof typeof INFO) => this.call('info', this.decoder, INFO[key]);
      return {
        width: at('width'),
        height: at('height'),
        columns: at('columns'),
        rows: at('rows'),
        tileWidth: at('tileWidth'),
        tileHeight: at('tileHeight'),
        alpha: at('alpha') === 1,
        depth: at('depth'),
        colour: COLOURS[at('colour')] ?? 'as-is',
        transfer: at('transfer'),
      };
    });
  }

  /** The file's ICC profile, EXIF (from its TIFF header, as libheif stores it after a 4-byte offset) and XMP. */
  metadata(): { icc: Uint8Array; exif: Uint8Array; xmp: Uint8Array } {
    const copy = (name: 'icc' | 'exif' | 'xmp', size: keyof typeof INFO) => {
      const length = this.call('info', this.decoder, INFO[size]);
      if (length <= 0) return new Uint8Array(0);
      const ptr = this.call(name, this.decoder) >>> 0;
      return this.codec.heap().slice(ptr, ptr + length);
    };
    const exif = copy('exif', 'exifSize');
    // HEIF's Exif item starts with the offset of the TIFF header from the end of that field.
    const skip = exif.length >= 4 ? 4 + ((exif[0]! << 24) | (exif[1]! << 16) | (exif[2]! << 8) | exif[3]!) : 0;
    return {
      icc: copy('icc', 'iccSize'),
      exif: skip > 0 && skip < exif.length ? exif.subarray(skip) : new Uint8Array(0),
      xmp: copy('xmp', 'xmpSize'),
    };
  }

  /**
   * The rows of `crop`, top to bottom, as RGBA (the view is reused: copy what must outlive the call).
   * Tile rows are decoded one tile per call, giving way after each; tile rows outside the crop are not.
   */
  async rows(crop: HeicCrop, sink: (row: Uint8Array) => void | Promise<void>): Promise<void> {
    const { columns, tileWidth, tileHeight } = this.info;
    const rowBytes = crop.width * 4;
    const row = new Uint8Array(rowBytes);
    const firstColumn = Math.floor(crop.x / tileWidth);
    const lastColumn = Math.min(columns - 1, Math.floor((crop.x + crop.width - 1) / tileWidth));
    for (let ty = Math.floor(crop.y / tileHeight); ty * tileHeight < crop.y + crop.height; ty++) {
      for (let tx = firstColumn; tx <= lastColumn; tx++) {
        this.closeOnThrow(() => {
          if (this.call('tile', this.decoder, tx, ty) !== 0) throw new HeicDecodeError(this.message());
        });
        await giveWay(tileWidth * tileHeight);
      }
      const from = Math.max(crop.y, ty * tileHeight);
      const to = Math.min(crop.y + crop.height, (ty + 1) * tileHeight);
      for (let y = from; y < to; y++) {
        // A picture that is not a grid is converted from its YCbCr planes a row per call (sr_heicdec_row).
        const at = this.closeOnThrow(() => {
          const ptr = this.call('row', this.decoder, y) >>> 0;
          if (!ptr) throw new HeicDecodeError(this.message());
          return ptr + crop.x * 4;
        });
        row.set(this.codec.heap().subarray(at, at + rowBytes));
        await sink(row);
      }
    }
  }

  private message(): string {
    const ptr = this.call('message', this.decoder) >>> 0;
    const heap = this.codec.heap();
    let end = ptr;
    while (heap[end] !== 0) end++;
    return new TextDecoder().decode(heap.subarray(ptr, end)) || 'the decoder failed';
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_heicdec_${name}`]!(...args);
  }
}
