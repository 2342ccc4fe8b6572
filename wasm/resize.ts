// Resampling (@jsquash/resize's squoosh resize build, wasm-bindgen, run through our own host).
import resizeWasm from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm';
import { BindgenInstance } from './bindgen.ts';
import { rgbaImage, type RgbaImage } from './image.ts';
import { Slot } from './instances.ts';

/** The filters of the squoosh resize build, by the index its `resize` export takes. */
export const RESIZE_FILTERS = ['triangle', 'catrom', 'mitchell', 'lanczos3'] as const;
export type ResizeFilter = (typeof RESIZE_FILTERS)[number];

export interface ResizeOptions {
  filter: ResizeFilter;
  /** Weight colours by alpha while filtering, so transparent pixels do not bleed their colour. */
  premultiply: boolean;
  /** Filter in linear light rather than on sRGB values. */
  linearRgb: boolean;
}

const resizer = new Slot('resize', () => new BindgenInstance(resizeWasm));

export function resizeImage(image: RgbaImage, width: number, height: number, options: ResizeOptions): RgbaImage {
  const data = resizer.run((codec) =>
    codec.callReturningBytes(
      'resize',
      image.data,
      image.width,
      image.height,
      width,
      height,
      RESIZE_FILTERS.indexOf(options.filter),
      Number(options.premultiply),
      Number(options.linearRgb),
    ),
  );
  return rgbaImage(data, width, height);
}
