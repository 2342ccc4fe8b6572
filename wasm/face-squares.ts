// How the face detector searches (wasm/face-engine.ts runs it; the faces bench times it the same way):
// the squares of the picture it looks at, each one pass of the network (128 × 128 pixels in), and the
// least score it keeps. Apart from the engine so Node (the bench) can read it.

/**
 * The least score kept: MediaPipe's and TensorFlow.js's default for this model. Lower lets through
 * faces in shirts, signs and crowds.
 */
export const FACE_MIN_SCORE = 0.75;
/** Square tiles at most along the long side of a picture at least FACE_TILE_ASPECT times as long as wide. */
export const FACE_TILES = 3;
export const FACE_TILE_ASPECT = 1.5;
/**
 * The smallest tile side of the fine search, in the picture's pixels: tiles of half the short side,
 * searched only when the whole picture and its coarse tiles show no face. The network sees 128 pixels
 * and finds faces down to about 20 of them: a face under a tenth of a 256-pixel preview is found only
 * there.
 */
export const FACE_FINE_MIN_SIDE = 64;

export interface Square {
  x: number;
  y: number;
  side: number;
}

/** `count` starts of a `side` window spread evenly over `length` (the first at 0, the last at the end). */
function spread(length: number, side: number, count: number): number[] {
  if (count <= 1 || length <= side) return [(length - side) / 2];
  return Array.from({ length: count }, (_, i) => ((length - side) * i) / (count - 1));
}

/**
 * The coarse search: the whole picture letterboxed, and for a long picture square tiles of its short
 * side along its long one (a face small in a wide picture is larger in a tile).
 */
export function coarseSquares(width: number, height: number): Square[] {
  const long = Math.max(width, height);
  const short = Math.min(width, height);
  const whole = { x: (width - long) / 2, y: (height - long) / 2, side: long };
  if (long < FACE_TILE_ASPECT * short) return [whole];
  const along = spread(long, short, Math.min(FACE_TILES, Math.ceil(long / short)));
  return [whole, ...along.map((at) => (width > height ? { x: at, y: 0, side: short } : { x: 0, y: at, side: short }))];
}

/** The fine search: tiles of half the short side (at least FACE_FINE_MIN_SIDE) over the whole picture. */
export function fineSquares(width: number, height: number): Square[] {
  const side = Math.max(FACE_FINE_MIN_SIDE, Math.round(Math.min(width, height) / 2));
  if (side >= Math.min(width, height)) return [];
  const xs = spread(width, side, Math.ceil(width / side));
  const ys = spread(height, side, Math.ceil(height / side));
  return ys.flatMap((y) => xs.map((x) => ({ x, y, side })));
}
