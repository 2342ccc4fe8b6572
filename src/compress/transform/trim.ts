// trim=border: the uniform border found before the crop. The request is planned and admitted as untrimmed
// for a first pass, which reads the input's upright rows at that plan's resize (its decoder and resampler,
// no encoder: the time of one more decode at that scale, a JPEG at its DCT scale) and finds the box of
// pixels that differ from the border's colour, the top-left pixel's as in sharp and libvips, by more than
// TRIM_BORDER_TOLERANCE on some channel. The box becomes trim sides in source pixels, and the trimmed
// request is planned and admitted again as itself (service.ts), so X-Crop-Box is the box taken.
import { swapsAxes } from '../exif.ts';
import type { InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import type { Plan } from '../memory-plan.ts';
import type { Timings } from '../timings.ts';
import type { CompressRequest } from '../types.ts';
import { TRIM_BORDER_TOLERANCE, type TrimSides } from './options.ts';
import { openRows } from './path.ts';

/** The box of rows that are not border, in the rows' pixels; null when every pixel is border. */
export async function contentBox(
  rows: { channels: number; rows: (sink: (row: Uint8Array) => void | Promise<void>) => Promise<void> },
  width: number,
): Promise<{ x0: number; y0: number; x1: number; y1: number } | null> {
  const ch = rows.channels;
  let border: Uint8Array | null = null;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -1, -1];
  let y = 0;
  const differs = (row: Uint8Array, x: number) => {
    for (let c = 0; c < ch; c++) if (Math.abs(row[x * ch + c]! - border![c]!) > TRIM_BORDER_TOLERANCE) return true;
    return false;
  };
  await rows.rows((row) => {
    border ??= row.slice(0, ch);
    let first = 0;
    while (first < width && !differs(row, first)) first++;
    if (first < width) {
      let last = width - 1;
      while (last > first && !differs(row, last)) last--;
      x0 = Math.min(x0, first);
      x1 = Math.max(x1, last);
      y0 = Math.min(y0, y);
      y1 = y;
    }
    y++;
  });
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}

/**
 * trim=border's sides in upright source pixels, from a first pass over the rows of the request planned
 * as untrimmed (`planned`); all 0 when there is no border to take (a flat image, or content to its edges).
 */
export async function borderSides(
  request: CompressRequest,
  planned: Plan,
  inputFormat: InputFormat,
  header: ImageHeader,
): Promise<TrimSides> {
  const g = planned.transform!;
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  const source = await openRows(request, planned, inputFormat, header.orientation, timings);
  let failed = true;
  let box;
  try {
    box = await contentBox(source, g.resized.width);
    failed = false;
  } finally {
    source.close(failed);
  }
  if (!box) return { top: 0, right: 0, bottom: 0, left: 0 };
  const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  const sx = upright.width / g.resized.width;
  const sy = upright.height / g.resized.height;
  return {
    top: Math.round(box.y0 * sy),
    right: upright.width - Math.round((box.x1 + 1) * sx),
    bottom: upright.height - Math.round((box.y1 + 1) * sy),
    left: Math.round(box.x0 * sx),
  };
}
