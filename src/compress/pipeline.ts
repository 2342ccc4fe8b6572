// The compression pipeline, from uploaded bytes to encoded output. No HTTP here: the route reads the
// upload, asks `prepare` what the request will take (memory, from the header alone), admits it, and
// runs `compress`. Every input streams: JPEG and WebP through the engines built in wasm/ (jpeg-path.ts,
// webp-path.ts), PNG through our row decoder and writers (png/png-path.ts), a GIF's first frame
// through our GIF decoder into the same writers (gif/gif-path.ts), an AVIF through libavif and dav1d
// (a module of its own) into them too (avif-input/avif-path.ts). Animations (GIF, WebP, AVIF sequences)
// asked as WebP are written as animated WebP a frame at a time (anim/anim-path.ts).
import { ApiError } from '../errors.ts';
import { FORMAT_NAMES, INPUT_FORMAT_NAMES, sniff, type InputFormat } from './formats.ts';
import { MalformedImage, readHeader, UnsupportedImage, type ImageHeader } from './header.ts';
import { animates, largestFittingWidth, plan, sizeAtWidth, type Plan, type PlanRequest } from './memory-plan.ts';
import { makeRoom, poolLimitForBudget } from '../../wasm/instances.ts';
import { engineJob } from '../../wasm/give-way.ts';
import { encoderQuality } from './quality-scale.ts';
import type { CompressedImage, CompressRequest, CompressResult } from './types.ts';
import { JPEG_MAX_DIMENSION, MAX_OUTPUT_DIMENSION, WEBP_MAX_DIMENSION } from './limits.ts';
import { oversize } from './transform/options.ts';
import { withPreviewMemory } from './transform/smart-crop.ts';
import { trimmedAway } from './transform/geometry.ts';
import type { TrimSides } from './transform/options.ts';
import { swapsAxes } from './exif.ts';
import { heicWholePictureNote } from './heic-input/memory.ts';
import { type GainMapPlan, planGainMap } from './gain-map/plan.ts';
import { losslessTooLarge, refuseJxl } from './jxl/rules.ts';

/** A request checked and planned from its header, before any pixel is decoded. */
export interface Prepared {
  request: CompressRequest;
  inputFormat: InputFormat;
  header: ImageHeader;
  plan: Plan;
  /** A JPEG's HDR gain map: kept (written after the picture) or dropped, decided with the plan. */
  gainMap?: GainMapPlan;
}

const unprocessable = (message: string): ApiError => new ApiError('unprocessable_image', message, { param: 'image' });

/**
 * Checks what the file is and what it declares, before any decoding: type, structure, pixel count.
 * `whole` false: `bytes` are only the file's first bytes (the "Try it" planner), so a file that looks
 * cut short is not refused for it; the upload itself is checked whole.
 */
export function inspect(bytes: Uint8Array, maxInputPixels: number, whole = true, heicInput = false) {
  const sniffed = sniff(bytes);
  if (sniffed.format === null) {
    throw new ApiError(
      'unsupported_media_type',
      `the image must be a ${INPUT_FORMAT_NAMES} file; this is ${sniffed.seen}`,
      { param: 'image' },
    );
  }
  const format = sniffed.format;
  if (format === 'heic' && !heicInput)
    throw new ApiError(
      'unsupported_media_type',
      'this is a HEIC, and HEIC input is not enabled on this service: its operator has not turned it on (HEIC_INPUT). Send a JPEG, PNG, WebP, GIF or AVIF',
      { param: 'image' },
    );
  let header;
  try {
    header = readHeader(format, bytes);
  } catch (err) {
    if (err instanceof MalformedImage)
      throw unprocessable(`the ${FORMAT_NAMES[format]} cannot be read: ${err.message}`);
    if (err instanceof UnsupportedImage) throw new ApiError('unsupported_media_type', err.message, { param: 'image' });
    throw err;
  }
  const pixels = header.width * header.height;
  if (pixels > maxInputPixels) {
    throw new ApiError(
      'image_too_large',
      `the image is ${header.width}×${header.height} (${megapixels(pixels, maxInputPixels)[0]} megapixels); the limit is ${megapixels(pixels, maxInputPixels)[1]} megapixels: ` +
        `send it at most ${Math.floor(Math.sqrt(maxInputPixels * (header.width / header.height)))} pixels wide (same proportions)`,
      { param: 'image', details: { width: header.width, height: header.height, pixels, max_pixels: maxInputPixels } },
    );
  }
  const overLimit = header.gif?.overLimit ?? header.animation?.overLimit;
  if (overLimit) throw new ApiError('image_too_large', overLimit, { param: 'image' });
  if (header.defect && whole) throw unprocessable(header.defect);
  return { format, header };
}

/** Two pixel counts in megapixels with as few decimals as tell them apart (100.0 vs 100.0001 is not "100.0 vs 100.0"). */
export function megapixels(a: number, b: number): [string, string] {
  for (let digits = 1; digits < 6; digits++) {
    const [x, y] = [(a / 1e6).toFixed(digits), (b / 1e6).toFixed(digits)];
    if (x !== y) return [x, y];
  }
  return [(a / 1e6).toFixed(6), (b / 1e6).toFixed(6)];
}

/**
 * Checks the upload and plans the request; refuses with 422 `image_too_large` one that could never fit
 * the memory budget, saying the largest width that would.
 */
export function prepare(
  request: CompressRequest,
  maxInputPixels: number,
  memoryBudget: number,
  heicInput = false,
): Prepared {
  // The engine's instances together may hold at most the budget (wasm/instances.ts).
  poolLimitForBudget(memoryBudget);
  const { format: inputFormat, header } = inspect(request.bytes, maxInputPixels, true, heicInput);
  const planned = planWithin(inputFormat, header, request.bytes.length, request, memoryBudget);
  refuseJxl(request, inputFormat, header, planned);
  const mapped = inputFormat === 'jpeg' ? planGainMap(request, header, planned, memoryBudget) : null;
  if (!mapped) return { request, inputFormat, header, plan: planned };
  return { request, inputFormat, header, plan: { ...planned, estimate: mapped.estimate }, gainMap: mapped.gainMap };
}

/** The plan of an upload of `uploadBytes` with this header; 422 `image_too_large` when none fits the budget. */
export function planWithin(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  memoryBudget: number,
): Plan {
  let planned = plan(inputFormat, header, uploadBytes, request, memoryBudget);
  if (planned.transform) {
    refuseTrimmedAway(header, request);
    refuseOversize(planned, header, request);
    planned = withPreviewMemory(planned, inputFormat, header, uploadBytes, request, memoryBudget);
  }
  refuseLongSide(request, planned);
  // Without the lossless fallback a large same-size JPEG may still fit: its lossy result is then kept.
  if (planned.estimate > memoryBudget && planned.lossless)
    planned = plan(inputFormat, header, uploadBytes, { ...request, allowLossless: false }, memoryBudget);
  if (planned.estimate > memoryBudget)
    throw tooLargeForMemory(inputFormat, header, uploadBytes, request, planned, memoryBudget);
  return planned;
}

/** 400 for a trim that leaves nothing of this image. */
function refuseTrimmedAway(header: ImageHeader, request: PlanRequest): void {
  const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  const trim = request.transform?.trim;
  const side = trimmedAway(upright, trim);
  if (!side || typeof trim !== 'object') return;
  const [a, b] = side === 'width' ? [trim.left, trim.right] : [trim.top, trim.bottom];
  throw new ApiError(
    'bad_request',
    `trim cuts ${a} + ${b} pixels from a side ${upright[side]} pixels long: nothing would be left of this ${upright.width}×${upright.height} image`,
    { param: 'trim' },
  );
}

/** 422 for a transformation that would make a side longer than any output may be, saying the box that fits. */
function refuseOversize(planned: Plan, header: ImageHeader, request: PlanRequest): void {
  const swap = swapsAxes(header.orientation);
  const upright = swap ? { width: header.height, height: header.width } : header;
  const over = oversize(planned.transform!, upright, request);
  if (!over) return;
  const size = (s: { width: number; height: number }) => `${s.width}×${s.height}`;
  const fit = request.transform?.fit;
  const what =
    over.reason === 'resized'
      ? `fit=${fit} resizes this ${size(upright)} image to ${size(planned.transform!.resized)} before it crops, and no side may be enlarged past ${MAX_OUTPUT_DIMENSION} pixels`
      : `fit=${fit} makes this ${size(upright)} image ${size(planned.output)}, and an output is at most ${MAX_OUTPUT_DIMENSION} pixels a side`;
  const fits = [
    over.fits.width === undefined ? null : `width=${over.fits.width}`,
    over.fits.height === undefined ? null : `height=${over.fits.height}`,
  ].filter((v) => v !== null);
  throw new ApiError('image_too_large', `${what}: it fits with ${fits.join(' and ')} or less`, {
    param: over.field,
    details: { ...planned.output, max_dimension: MAX_OUTPUT_DIMENSION },
  });
}

const LONGEST_SIDE: Partial<Record<PlanRequest['format'], number>> = {
  webp: WEBP_MAX_DIMENSION,
  jpeg: JPEG_MAX_DIMENSION,
};

/** 422 for an output with a side longer than its format can store, saying the width or height that fits. */
function refuseLongSide(request: PlanRequest, planned: Plan): void {
  const { width, height } = planned.output;
  const longest = LONGEST_SIDE[request.format];
  if (longest === undefined || Math.max(width, height) <= longest) return;
  const side = width >= height ? 'width' : 'height';
  throw new ApiError(
    'image_too_large',
    `${FORMAT_NAMES[request.format]} is at most ${longest} pixels a side; this output is ${width}×${height}: it fits with ${side}=${longest} or less`,
    {
      param: request[side] !== undefined ? side : 'image',
      details: { width, height, max_dimension: longest },
    },
  );
}

const mb = (bytes: number): string => `${Math.ceil(bytes / (1024 * 1024))} MB`;

function tooLargeForMemory(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  planned: Plan,
  budget: number,
): ApiError {
  if (request.format === 'jxl' && request.lossless) {
    const lossy = { ...request, lossless: false, allowLossless: false };
    const maxWidth = largestFittingWidth(inputFormat, header, uploadBytes, lossy, budget);
    return losslessTooLarge(header, uploadBytes, planned.estimate, budget, maxWidth);
  }
  const size = `${header.width}×${header.height}`;
  const needs = `needs about ${mb(planned.estimate)}, more than the ${mb(budget)} one compression may use`;
  const maxWidth = largestFittingWidth(inputFormat, header, uploadBytes, { ...request, allowLossless: false }, budget);
  const box = maxWidth === null ? null : sizeAtWidth(request, maxWidth);
  const advice =
    box === null
      ? `no output size fits${heicWholePictureNote(header)}`
      : `it fits with width=${box.width}${box.height === undefined ? '' : ` and height=${box.height}`} or less`;
  return new ApiError(
    'image_too_large',
    `at ${planned.output.width}×${planned.output.height} this ${size} ${FORMAT_NAMES[inputFormat]} ${needs}; ${advice}`,
    {
      param: request.width !== undefined ? 'width' : 'image',
      details: {
        width: header.width,
        height: header.height,
        estimate_bytes: planned.estimate,
        budget_bytes: budget,
        max_width: maxWidth,
      },
    },
  );
}

export async function compress(prepared: Prepared): Promise<CompressedImage> {
  const result = await engineJob(() => compressIn(prepared));
  const { quality, format } = result;
  return { ...result, encoderQuality: quality === 'lossless' ? quality : encoderQuality(format, quality) };
}

/**
 * trim=border's first pass, for a request prepared as untrimmed and admitted by that plan: the border's
 * sides (all 0 when there is none) and the milliseconds it took.
 */
export async function findBorder(prepared: Prepared): Promise<{ sides: TrimSides; ms: number }> {
  return engineJob(async () => {
    makeRoom(prepared.plan.estimate, 'sr_jpeg');
    const started = performance.now();
    const { borderSides } = await import('./transform/trim.ts');
    const sides = await borderSides(prepared.request, prepared.plan, prepared.inputFormat, prepared.header);
    return { sides, ms: performance.now() - started };
  });
}

async function compressIn(prepared: Prepared): Promise<CompressResult> {
  const { request, inputFormat, header, plan: planned } = prepared;
  // Admitted: the request's estimate is its own. An idle engine instance counts as reused only where the
  // whole request runs in one engine instance: a JPEG to a JPEG, untransformed (one job decodes and
  // encodes). Elsewhere two instances share the estimate: a reader and the row encoder (a transformation,
  // PNG or GIF rows to JPEG, WebP's rows), a decoder and the AVIF or JPEG XL encoder, or a decoder module
  // of its own (AVIF, HEIC); a grown idle instance kept for one of them left the other no room (503 after
  // a larger request).
  const oneInstance = inputFormat === 'jpeg' && request.format === 'jpeg' && !request.transform;
  makeRoom(planned.estimate, oneInstance ? 'sr_jpeg' : undefined);
  if (request.format === 'jxl' && request.lossless) {
    const { transcodeJpeg } = await import('./jxl/jxl-path.ts');
    const result = await transcodeJpeg(request, planned, header, prepared.gainMap?.source);
    // The picture is the JPEG's own; the JXL shows no gain map (the JPEG djxl rebuilds has it).
    return prepared.gainMap ? { ...result, gainMap: 'dropped' } : result;
  }
  if (request.transform) {
    const [{ compressTransformed }, { answered, smartCrop }] = await Promise.all([
      import('./transform/path.ts'),
      import('./transform/smart-crop.ts'),
    ]);
    const smart = await smartCrop(request, planned, inputFormat, header);
    const used = smart?.plan ?? planned;
    const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
    const mapTransform = used.transform && {
      upright: { width: upright.width, height: upright.height },
      geometry: used.transform,
      flip: request.transform.flip,
      rotate: request.transform.rotate,
      orientation: header.orientation,
    };
    // An animation written as animated WebP takes every frame through the transformation (anim/anim-path.ts).
    const result = animates(inputFormat, header, request)
      ? await (await import('./anim/anim-path.ts')).compressAnimation(request, used, inputFormat, header)
      : request.format === 'avif' && prepared.gainMap && mapTransform
        ? await (await import('./gain-map/avif.ts')).withAvifGainMap(request, prepared.gainMap, mapTransform, (r) =>
            compressTransformed(r, used, inputFormat, header.orientation),
          )
        : await compressTransformed(request, used, inputFormat, header.orientation);
    const cropped = smart ? answered(result, smart) : result;
    if (!prepared.gainMap || cropped.gainMap) return cropped;
    if (!mapTransform) return { ...cropped, gainMap: 'dropped' };
    const { withTransformedGainMap } = await import('./gain-map/write.ts');
    return withTransformedGainMap(cropped, prepared.gainMap, mapTransform);
  }
  if (inputFormat === 'jpeg') {
    const { compressJpeg } = await import('./jpeg-path.ts');
    if (!prepared.gainMap) return compressJpeg(request, planned, header.orientation, request.metadata ?? 'strip');
    if (request.format === 'avif') {
      const [{ withAvifGainMap }, { resizeGeometry }] = await Promise.all([
        import('./gain-map/avif.ts'),
        import('./gain-map/resize-geometry.ts'),
      ]);
      const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
      return withAvifGainMap(
        request,
        prepared.gainMap,
        {
          upright: { width: upright.width, height: upright.height },
          geometry: resizeGeometry(planned.output),
          rotate: 0,
          orientation: header.orientation,
        },
        (r) => compressJpeg(r, planned, header.orientation, request.metadata ?? 'strip'),
      );
    }
    const { pictureRequest, withGainMap } = await import('./gain-map/write.ts');
    const picture = pictureRequest(request, prepared.gainMap);
    const result = await compressJpeg(picture, planned, header.orientation, request.metadata ?? 'strip');
    return withGainMap(result, prepared.gainMap);
  }
  if (animates(inputFormat, header, request)) {
    const { compressAnimation } = await import('./anim/anim-path.ts');
    return compressAnimation(request, planned, inputFormat, header);
  }
  if (inputFormat === 'webp' && header.animation) {
    const { compressWebpFirstFrame } = await import('./anim/webp-frames.ts');
    return compressWebpFirstFrame(request, planned, header);
  }
  if (inputFormat === 'webp') {
    const { compressWebp } = await import('./webp-path.ts');
    return compressWebp(request, planned, header.orientation, request.metadata ?? 'strip');
  }
  if (inputFormat === 'gif') {
    const { compressGif } = await import('./gif/gif-path.ts');
    return compressGif(request, planned);
  }
  if (inputFormat === 'avif') {
    const { compressAvif } = await import('./avif-input/avif-path.ts');
    return compressAvif(request, planned, header);
  }
  if (inputFormat === 'heic') {
    const { compressHeic } = await import('./heic-input/heic-path.ts');
    return compressHeic(request, planned, header);
  }
  const { compressPng } = await import('./png/png-path.ts');
  return compressPng(request, planned, header.orientation);
}
