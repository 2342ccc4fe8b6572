// The face detector (wasm/src/sr_face.c, built by wasm/build-face.sh): BlazeFace short-range run over a
// small RGBA picture, boxes in that picture's pixels. A module of its own, instantiated only by a
// gravity=face crop.
import createFaceModule from './codec/sr_face.js';
import faceWasm from './codec/sr_face.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import type { RgbaImage } from './image.ts';
import { coarseSquares, FACE_MIN_SCORE, fineSquares, type Square } from './face-squares.ts';
import { giveWay } from './give-way.ts';
import { Slot } from './instances.ts';

type Fn = (...args: number[]) => number;
interface FaceModule {
  _malloc: Fn;
  _free: Fn;
  _sr_face_picture: Fn;
  _sr_face_begin: Fn;
  _sr_face_pass: Fn;
  _sr_face_finish: Fn;
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

export class FaceEngineError extends Error {}

export const faceSlot = new Slot(
  'sr_face',
  () => new EmscriptenInstance(createFaceModule as EmscriptenFactory<FaceModule>, faceWasm),
);

/**
 * The faces in `picture`, best first: the coarse search, then the fine one when the coarse found none.
 * One pass of the network (about 5 ms of CPU) at a time, giving way between passes; the instance is this
 * search's alone until it ends (the passes' boxes wait in its memory).
 */
export async function detectFaces(picture: RgbaImage): Promise<Face[]> {
  const { instance, release } = faceSlot.borrow(true);
  const codec = instance as EmscriptenInstance<FaceModule>;
  const m = codec.module;
  let failed = true;
  const ptr = m._sr_face_picture(picture.width, picture.height) >>> 0;
  try {
    if (!ptr) throw new FaceEngineError('out of memory for the picture');
    codec.heap().set(picture.data, ptr);
    if (!m._sr_face_begin(ptr, picture.width, picture.height, FACE_MIN_SCORE))
      throw new FaceEngineError(codec.string(m._sr_face_message() >>> 0));
    const search = async (squares: Square[]) => {
      for (const square of squares) {
        await giveWay();
        if (!m._sr_face_pass(square.x, square.y, square.side))
          throw new FaceEngineError(codec.string(m._sr_face_message() >>> 0));
      }
      return m._sr_face_finish();
    };
    let count = await search(coarseSquares(picture.width, picture.height));
    if (count === 0) count = await search(fineSquares(picture.width, picture.height));
    const boxes = new Float32Array(codec.heap().buffer, m._sr_face_boxes() >>> 0, count * 5);
    const faces: Face[] = [];
    for (let i = 0; i < count; i++) {
      const [x = 0, y = 0, width = 0, height = 0, score = 0] = Array.from(boxes.subarray(i * 5, i * 5 + 5));
      faces.push({ x, y, width, height, score });
    }
    failed = false;
    return faces;
  } finally {
    if (ptr) m._free(ptr);
    release(failed);
  }
}
