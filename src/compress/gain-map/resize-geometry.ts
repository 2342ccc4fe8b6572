// The geometry of a request that only resizes, in the transformations' terms: the upright source resized to
// the output, all of it kept. A gain map goes through it like through any transformation (transformed.ts).
import type { Size } from '../geometry.ts';
import type { TransformGeometry } from '../transform/geometry.ts';

export function resizeGeometry(output: Size): TransformGeometry {
  const box = { x: 0, y: 0, width: output.width, height: output.height };
  return {
    resized: output,
    crop: box,
    sourceCrop: null,
    content: output,
    padding: { top: 0, right: 0, bottom: 0, left: 0 },
    output,
  };
}
