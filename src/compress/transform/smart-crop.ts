// gravity=auto: where a cover or crop keeps the image, decided by what draws the eye. Before the full
// decode, the input's preview (preview.ts: JPEG at DCT 1/8, the other decoders' rows averaged) is scored
// by saliency.ts for the crop's aspect ratio; the centre of the box it picks becomes a focal point in the
// output's axes, which geometry.ts places like any `XxY`. A flat picture (nothing to choose by) and a
// preview the plan has no memory for get the centre, answered as X-Gravity: center with confidence 0.
// gravity=face looks for faces on the same preview first (preview/faces.ts says where the crop goes);
// without any it is gravity=auto, its confidence scaled down.
import type { RgbaImage } from '../../../wasm/image.ts';
import type { ImageHeader } from '../header.ts';
import type { InputFormat } from '../formats.ts';
import { swapsAxes } from '../exif.ts';
import type { Plan } from '../memory-plan.ts';
import { previewMemory } from '../preview/size.ts';
import { FACE_DETECTOR_BYTES, FACE_FALLBACK_CONFIDENCE, faceCrop } from '../preview/faces.ts';
import { boxSize, salientCrop } from '../preview/saliency.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { transformGeometry } from './geometry.ts';
import { AUTO_GRAVITY, FACE_GRAVITY, type Flip, type Rotation } from './options.ts';

/** What placed a smart crop: faces, the saliency (`auto`), or the centre it fell back to, and how sure it was (0–1). */
export interface SmartCropDecision {
  gravity: typeof FACE_GRAVITY | typeof AUTO_GRAVITY | 'center';
  confidence: number;
}

const CENTRED: SmartCropDecision = { gravity: 'center', confidence: 0 };

/** Whether the request leaves the crop to the preview: gravity=auto or face, and its fit crops this image. */
const decides = (request: Pick<CompressRequest, 'transform'>, planned: Plan): boolean =>
  (request.transform?.gravity === AUTO_GRAVITY || request.transform?.gravity === FACE_GRAVITY) &&
  planned.transform?.sourceCrop != null;

/** The preview's memory, with the face detector's beside it for gravity=face. */
const smartMemory = (
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: Pick<CompressRequest, 'transform'>,
) =>
  previewMemory(inputFormat, header, uploadBytes) +
  (request.transform?.gravity === FACE_GRAVITY ? FACE_DETECTOR_BYTES : 0);

/**
 * The plan of a gravity=auto crop holds the preview too: it is made before the full decode and let go
 * first, so the request needs the larger of the two. When that is over the budget the plan is left as it
 * is, and the crop falls back to the centre rather than refusing an image that fits without it.
 */
export function withPreviewMemory(
  planned: Plan,
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: Pick<CompressRequest, 'transform'>,
  budget: number,
): Plan {
  if (!decides(request, planned)) return planned;
  const estimate = Math.max(planned.estimate, smartMemory(inputFormat, header, uploadBytes, request));
  return estimate <= budget ? { ...planned, estimate } : planned;
}

/** A point (0–1 on each axis) of the upright picture, where it lands after the flip, then the rotation. */
function turnedPoint(u: number, v: number, flip: Flip | undefined, rotate: Rotation): { x: number; y: number } {
  if (flip === 'h' || flip === 'hv') u = 1 - u;
  if (flip === 'v' || flip === 'hv') v = 1 - v;
  switch (rotate) {
    case 90:
      return { x: 1 - v, y: u };
    case 180:
      return { x: 1 - u, y: 1 - v };
    case 270:
      return { x: v, y: 1 - u };
    default:
      return { x: u, y: v };
  }
}

export interface SmartCrop {
  /** The plan with the crop where the saliency put it. */
  plan: Plan;
  decided: SmartCropDecision;
  /** Milliseconds the preview and its scoring took. */
  ms: number;
}

/**
 * For a gravity=auto crop, the plan with the crop placed by the saliency and what decided it; null for
 * any other request. Runs in the engine job, inside the memory the plan admitted.
 */
export async function smartCrop(
  request: CompressRequest,
  planned: Plan,
  inputFormat: InputFormat,
  header: ImageHeader,
): Promise<SmartCrop | null> {
  if (!decides(request, planned)) return null;
  const started = performance.now();
  const placed = await placeCrop(request, planned, inputFormat, header);
  return { ...placed, ms: performance.now() - started };
}

/** The result as a gravity=auto crop answers it: what decided the crop, and the preview's time in `decode`. */
export function answered(result: CompressResult, smart: SmartCrop): CompressResult {
  if (!result.crop) return result;
  return {
    ...result,
    crop: { ...result.crop, ...smart.decided },
    timings: { ...result.timings, decode: result.timings.decode + smart.ms },
  };
}

async function placeCrop(
  request: CompressRequest,
  planned: Plan,
  inputFormat: InputFormat,
  header: ImageHeader,
): Promise<Omit<SmartCrop, 'ms'>> {
  const geometry = planned.transform!;
  const t = request.transform!;
  if (smartMemory(inputFormat, header, request.bytes.length, request) > planned.estimate)
    return { plan: planned, decided: CENTRED };
  // Loaded here, not with the module: the planner (and the OpenAPI generator, in Node) reads this file too.
  const { makePreview } = await import('../preview/preview.ts');
  const preview = await makePreview(request.bytes, inputFormat, header);
  // The kept block's aspect ratio in the upright axes, where the preview is.
  const aspect = geometry.crop.width / geometry.crop.height;
  const faced = t.gravity === FACE_GRAVITY ? await findFaces(preview, aspect) : null;
  const { box, confidence } = faced ?? salientCrop(preview, aspect);
  // Nothing to choose by: the centre, where geometry already placed `auto`.
  if (confidence === 0) return { plan: planned, decided: CENTRED };
  const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  // The preview is of the whole picture; a trim's sides are cut before the fit, so the point is moved into what it keeps.
  const trim = typeof t.trim === 'object' ? t.trim : { top: 0, right: 0, bottom: 0, left: 0 };
  const within = (at: number, whole: number, before: number, after: number) =>
    (at * whole - before) / Math.max(1, whole - before - after);
  const focal = turnedPoint(
    within((box.x + box.width / 2) / preview.width, upright.width, trim.left, trim.right),
    within((box.y + box.height / 2) / preview.height, upright.height, trim.top, trim.bottom),
    t.flip,
    t.rotate,
  );
  const placed = transformGeometry(upright, { ...t, gravity: focal, width: request.width, height: request.height });
  const decided: SmartCropDecision = faced
    ? { gravity: FACE_GRAVITY, confidence }
    : t.gravity === FACE_GRAVITY
      ? { gravity: AUTO_GRAVITY, confidence: Math.round(confidence * FACE_FALLBACK_CONFIDENCE * 100) / 100 }
      : { gravity: AUTO_GRAVITY, confidence };
  return { plan: { ...planned, transform: placed }, decided };
}

/** The crop the preview's faces decide, or null when it has none. */
async function findFaces(preview: RgbaImage, aspect: number) {
  const { detectFaces, FaceEngineError } = await import('../../../wasm/face-engine.ts');
  try {
    return faceCrop(preview, boxSize(preview.width, preview.height, aspect), await detectFaces(preview));
  } catch (err) {
    // The detector out of memory: the saliency still places the crop, as when no face is found.
    if (err instanceof FaceEngineError) return null;
    throw err;
  }
}
