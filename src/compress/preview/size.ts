// The preview's size (preview.ts makes it): apart from the engines, so that a plan can count a preview's
// memory (the smart crop's, transform/smart-crop.ts) without loading them.
import { swapsAxes } from '../exif.ts';
import type { InputFormat } from '../formats.ts';
import { fitWithin, type Size } from '../geometry.ts';
import type { ImageHeader } from '../header.ts';
import { DEFAULT_QUALITY } from '../limits.ts';
import { plan } from '../memory-plan.ts';

/**
 * The preview's longest side, at most: enough for a ThumbHash (made from ≤ 100 px), a dominant colour and a
 * saliency map whose cells are a few source pixels of a phone photo's 1/16, small enough to cost < 1 MB.
 */
export const PREVIEW_MAX_SIDE = 256;

/** The preview's size, upright: the picture fitted within PREVIEW_MAX_SIDE², never enlarged. */
export function previewSize(header: ImageHeader): Size {
  const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  return fitWithin(upright, { width: PREVIEW_MAX_SIDE, height: PREVIEW_MAX_SIDE });
}

/**
 * The memory a preview takes: a compression's to a JPEG of the preview's size, the same decoder at the
 * same DCT scale (JPEG) and the same row readers (WebP, PNG, GIF), with an output too small to count.
 * Image info admits it; a gravity=auto crop plans for it beside the compression.
 */
export function previewMemory(format: InputFormat, header: ImageHeader, uploadBytes: number, budget?: number): number {
  const request = {
    format: 'jpeg',
    quality: DEFAULT_QUALITY,
    width: PREVIEW_MAX_SIDE,
    height: PREVIEW_MAX_SIDE,
  } as const;
  return plan(format, header, uploadBytes, request, budget).estimate;
}
