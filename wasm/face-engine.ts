// The face detector (wasm/src/sr_face.c, built by wasm/build-face.sh): BlazeFace short-range run over a
// small RGBA picture, boxes in that picture's pixels. A module of its own, instantiated only by a
// gravity=face crop; one synchronous call per picture, so an instance is never held across awaits.
import createFaceModule from './codec/sr_face.js';
import faceWasm from './codec/sr_face.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import type { RgbaImage } from './image.ts';
import { Slot } from './instances.ts';

type Fn = (...args: number[]) => number;
interface FaceModule {
  _malloc: Fn;
  _free: Fn;
  _sr_face_picture: Fn;
  _sr_face_detect: Fn;
  _sr_face_boxes: Fn;
  _sr_face_message: Fn;
}

/** A face found: its box in the picture's pixels and the network's score (0–1). */
export interface Face {
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

/**
 * The least score kept: MediaPipe's and TensorFlow.js's default for this model. Lower lets through
 * faces on posters and patterned cloth; the bench (docs/benchmarks.md) found no face missed at this one.
 */
export const FACE_MIN_SCORE = 0.75;
/**
 * Square tiles along the long side, beside the whole picture, of a picture at least 1.5 times as long as
 * wide: a face small in a wide picture is larger in a tile (the network sees 128 × 128 pixels).
 */
export const FACE_TILES = 3;
export class FaceEngineError extends Error {}

export const faceSlot = new Slot(
  'sr_face',
  () => new EmscriptenInstance(createFaceModule as EmscriptenFactory<FaceModule>, faceWasm),
);

/** The faces in `picture`, best first. */
export function detectFaces(picture: RgbaImage): Face[] {
  return faceSlot.run((codec) => {
    const m = codec.module;
    const ptr = m._sr_face_picture(picture.width, picture.height) >>> 0;
    if (!ptr) throw new FaceEngineError('out of memory for the picture');
    try {
      codec.heap().set(picture.data, ptr);
      const count = m._sr_face_detect(ptr, picture.width, picture.height, FACE_MIN_SCORE, FACE_TILES);
      if (count < 0) throw new FaceEngineError(codec.string(m._sr_face_message() >>> 0));
      const boxes = new Float32Array(codec.heap().buffer, m._sr_face_boxes() >>> 0, count * 5);
      const faces: Face[] = [];
      for (let i = 0; i < count; i++) {
        const [x = 0, y = 0, width = 0, height = 0, score = 0] = Array.from(boxes.subarray(i * 5, i * 5 + 5));
        faces.push({ x, y, width, height, score });
      }
      return faces;
    } finally {
      m._free(ptr);
    }
  });
}
