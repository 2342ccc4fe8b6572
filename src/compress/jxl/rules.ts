// What JPEG XL output refuses before any pixel is decoded: a lossless transcode of anything but a
// Huffman-coded JPEG left as it is, and a picture larger than JXL_MAX_PIXELS.
import { ApiError } from '../../errors.ts';
import { FORMAT_NAMES, type InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import type { Plan } from '../memory-plan.ts';
import type { CompressRequest } from '../types.ts';
import { JXL_MAX_PIXELS } from './settings.ts';

/** The refusal of a lossless transcode of a JPEG libjxl cannot transcode, with the reason. */
export const losslessRefused = (reason: string): ApiError =>
  new ApiError(
    'unprocessable_image',
    `this JPEG cannot be converted losslessly to JPEG XL: ${reason}; leave out lossless=true for a lossy JPEG XL`,
    { param: 'lossless' },
  );

/** Throws the refusal of a JPEG XL request this plan cannot be written as; nothing for other formats. */
export function refuseJxl(
  request: CompressRequest,
  inputFormat: InputFormat,
  header: ImageHeader,
  planned: Plan,
): void {
  if (request.format !== 'jxl') return;
  if (request.lossless) {
    if (inputFormat !== 'jpeg')
      throw new ApiError(
        'unprocessable_image',
        `lossless=true with jxl output re-codes a JPEG's own data; this is a ${FORMAT_NAMES[inputFormat]}: leave out lossless=true for a lossy JPEG XL`,
        { param: 'lossless' },
      );
    // libjxl answers such a file with a bare "refused": the reason is known from the frame's marker.
    if (header.jpeg?.arithmetic)
      throw losslessRefused('it is arithmetic-coded, and libjxl transcodes Huffman-coded JPEGs only');
    if (planned.resized || request.transform)
      throw new ApiError(
        'unprocessable_image',
        'lossless=true with jxl output keeps the JPEG as it is: it cannot be resized or transformed; leave out lossless=true, or the resize and transformation',
        { param: 'lossless' },
      );
  }
  const { width, height } = planned.output;
  if (width * height <= JXL_MAX_PIXELS) return;
  if (request.lossless)
    throw new ApiError(
      'image_too_large',
      `JPEG XL is written at most ${(JXL_MAX_PIXELS / 1e6).toFixed(1)} megapixels; this JPEG is ${width}×${height} (${((width * height) / 1e6).toFixed(1)} megapixels), and lossless=true keeps its size: leave out lossless=true for a lossy JPEG XL at a width that fits`,
      { param: 'lossless', details: { width, height, pixels: width * height, max_pixels: JXL_MAX_PIXELS } },
    );
  const maxWidth = Math.floor(Math.sqrt(JXL_MAX_PIXELS * (width / height)));
  throw new ApiError(
    'image_too_large',
    `JPEG XL is written at most ${(JXL_MAX_PIXELS / 1e6).toFixed(1)} megapixels; this output is ${width}×${height} (${((width * height) / 1e6).toFixed(1)} megapixels): it fits with width=${maxWidth} or less`,
    {
      param: request.width !== undefined ? 'width' : 'image',
      details: { width, height, pixels: width * height, max_pixels: JXL_MAX_PIXELS, max_width: maxWidth },
    },
  );
}
