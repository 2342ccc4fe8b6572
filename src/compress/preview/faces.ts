// gravity=face: where a crop goes when the preview has faces (the detector: wasm/face-engine.ts). The
// rule, on the preview: the crop keeps every face when they fit in it together, centred on them;
// otherwise it keeps as many faces as it can, then the most face area, then sits nearest the faces'
// centre. A face counts as kept when at least FACE_KEPT_SHARE of its box is inside the crop.
// Without the engine, so the planner (and the OpenAPI generator, in Node) can read it.
import type { CropBox } from './saliency.ts';

/** A face's box on the preview and the detector's score (0–1). */
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

/** The share of a face's box a crop must hold for the face to count as kept (the bench's measure too). */
export const FACE_KEPT_SHARE = 0.9;
/**
 * gravity=face that found no face falls back to the saliency, whose confidence is scaled by this: a
 * guess at where people are is less sure than people seen.
 */
export const FACE_FALLBACK_CONFIDENCE = 0.5;
/** Memory the face detector may take beside the preview (wasm/face-engine.ts measures it). */
export const FACE_DETECTOR_BYTES = 6 * 1024 * 1024;

export interface FaceCrop {
  box: CropBox;
  /** The faces the crop keeps. */
  kept: FaceBox[];
  /** The mean score of the faces kept, times the share of all faces kept (none kept: see below). */
  confidence: number;
}

/**
 * The crop of `size` (spanning the preview in one axis, as saliency.ts's boxSize makes it) on a preview
 * of `preview` size that keeps the faces by the rule above; null when there are none.
 */
export function faceCrop(
  preview: { width: number; height: number },
  size: { width: number; height: number },
  faces: readonly FaceBox[],
): FaceCrop | null {
  if (faces.length === 0) return null;
  const horizontal = size.width < preview.width;
  const length = horizontal ? preview.width : preview.height;
  const span = horizontal ? size.width : size.height;
  // Each face as its extent along the axis the crop moves in, kept within the preview.
  const extents = faces.map((f) => {
    const start = Math.max(0, horizontal ? f.x : f.y);
    const end = Math.min(length, horizontal ? f.x + f.width : f.y + f.height);
    return { start, end: Math.max(start, end), area: f.width * f.height };
  });
  const first = Math.min(...extents.map((e) => e.start));
  const last = Math.max(...extents.map((e) => e.end));
  const clamp = (offset: number) => Math.max(0, Math.min(length - span, Math.round(offset)));
  const keeps = (offset: number) =>
    extents.map((e) => {
      const inside = Math.min(e.end, offset + span) - Math.max(e.start, offset);
      return e.end === e.start || inside >= FACE_KEPT_SHARE * (e.end - e.start);
    });

  let best = clamp((first + last) / 2 - span / 2);
  if (last - first > span) {
    // Not all fit: the offset keeping the most faces, then the most face area, then the nearest the
    // middle of all of them.
    const middle = (first + last) / 2 - span / 2;
    let bestCount = -1;
    let bestArea = -1;
    for (let offset = 0; offset + span <= length; offset++) {
      const kept = keeps(offset);
      const count = kept.filter(Boolean).length;
      const area = extents.reduce((sum, e, i) => sum + (kept[i] ? e.area : 0), 0);
      const better =
        count > bestCount ||
        (count === bestCount && area > bestArea) ||
        (count === bestCount && area === bestArea && Math.abs(offset - middle) < Math.abs(best - middle));
      if (better) {
        best = offset;
        bestCount = count;
        bestArea = area;
      }
    }
    // Centred on the faces it keeps, as far as that keeps them all.
    const kept = keeps(best);
    const keptExtents = extents.filter((_, i) => kept[i]);
    if (keptExtents.length > 0) {
      const centred = clamp(
        (Math.min(...keptExtents.map((e) => e.start)) + Math.max(...keptExtents.map((e) => e.end))) / 2 - span / 2,
      );
      if (keeps(centred).filter(Boolean).length >= keptExtents.length) best = centred;
    }
  }
  const kept = keeps(best);
  const keptFaces = faces.filter((_, i) => kept[i]);
  const mean = (list: readonly FaceBox[]) => list.reduce((sum, f) => sum + f.score, 0) / list.length;
  // A face wider than the crop is kept by none: the crop is still centred on the faces, less surely.
  const confidence =
    keptFaces.length > 0 ? mean(keptFaces) * (keptFaces.length / faces.length) : mean(faces) * FACE_FALLBACK_CONFIDENCE;
  return {
    box: horizontal ? { x: best, y: 0, ...size } : { x: 0, y: best, ...size },
    kept: keptFaces,
    confidence: Math.round(confidence * 100) / 100,
  };
}
