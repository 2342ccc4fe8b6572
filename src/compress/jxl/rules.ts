// What JPEG XL output refuses before any pixel is decoded: a lossless transcode of anything but a
// Huffman-coded JPEG left as it is, a lossless transcode past the memory budget, and a picture larger
// than JXL_MAX_PIXELS.
import { ApiError } from '../../errors.ts';
import { FORMAT_NAMES, type InputFormat } from '../formats.ts';
import { swapsAxes } from '../exif.ts';
import type { ImageHeader } from '../header.ts';
import { REQUEST_BASE_BYTES, type Plan } from '../memory-plan.ts';
import type { CompressRequest } from '../types.ts';
import { JXL_MAX_PIXELS, jxlTranscodeMaxPixels } from './settings.ts';

/** The widest output of this aspect JPEG XL is written at (JXL_MAX_PIXELS). */
const jxlMaxWidth = (width: number, height: number): number => Math.floor(Math.sqrt(JXL_MAX_PIXELS * (width / height)));

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
  const maxWidth = jxlMaxWidth(width, height);
  throw new ApiError(
    'image_too_large',
    `JPEG XL is written at most ${(JXL_MAX_PIXELS / 1e6).toFixed(1)} megapixels; this output is ${width}×${height} (${((width * height) / 1e6).toFixed(1)} megapixels): it fits with width=${maxWidth} or less`,
    {
      param: request.width !== undefined ? 'width' : 'image',
      details: { width, height, pixels: width * height, max_pixels: JXL_MAX_PIXELS, max_width: maxWidth },
    },
  );
}

/**
 * 422 for a lossless transcode past the memory budget. No width helps (the transcode keeps the JPEG's
 * size and holds all of its coefficients), so it says how many megapixels the budget admits at this
 * file's size, and the width at which a lossy JPEG XL fits (`lossyMaxWidth`, the plan's own search).
 */
export function losslessTooLarge(
  header: ImageHeader,
  uploadBytes: number,
  estimate: number,
  budget: number,
  lossyMaxWidth: number | null,
): ApiError {
  const { width, height } = header;
  const maxPixels = Math.min(JXL_MAX_PIXELS, jxlTranscodeMaxPixels(budget - REQUEST_BASE_BYTES, uploadBytes));
  // A lossy JPEG XL is upright, and within JXL_MAX_PIXELS too (a roomy budget's search may go past it).
  const upright = swapsAxes(header.orientation) ? [height, width] : [width, height];
  const maxWidth = lossyMaxWidth === null ? null : Math.min(lossyMaxWidth, jxlMaxWidth(upright[0]!, upright[1]!));
  const mb = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024))} MB`;
  const megapixels = (pixels: number) => (pixels / 1e6).toFixed(1);
  const lossy =
    maxWidth === null
      ? 'no lossy JPEG XL of it fits either'
      : `leave out lossless=true for a lossy JPEG XL with width=${maxWidth} or less`;
  return new ApiError(
    'image_too_large',
    `lossless=true transcodes the whole picture at its own size: this ${width}×${height} JPEG (${megapixels(width * height)} megapixels) needs about ${mb(estimate)}, more than the ${mb(budget)} one compression may use, which admits at most ${megapixels(maxPixels)} megapixels; ${lossy}`,
    {
      param: 'lossless',
      details: {
        width,
        height,
        estimate_bytes: estimate,
        budget_bytes: budget,
        max_pixels: maxPixels,
        max_width: maxWidth,
      },
    },
  );
}
