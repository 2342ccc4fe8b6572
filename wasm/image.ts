/** 8-bit RGBA pixels, row-major, no padding: what every codec here takes and gives. */
export interface RgbaImage {
  data: Uint8Array;
  width: number;
  height: number;
}

export function rgbaImage(data: Uint8Array, width: number, height: number): RgbaImage {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`image dimensions must be positive integers, got ${width}×${height}`);
  }
  if (data.length !== width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} RGBA bytes for ${width}×${height}, got ${data.length}`);
  }
  return { data, width, height };
}

/** A byte view of any typed array, without copying. */
export const bytesOf = (view: ArrayBufferView): Uint8Array =>
  view instanceof Uint8Array && view.constructor === Uint8Array
    ? view
    : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
