// The map's geometry beside an untransformed picture: the EXIF orientation and the resize, at the map's
// own scale, done by the engine as it does the picture's. A transformed picture's map (a crop, a turn, a
// mirror, padding) is sampled back through the transformation instead (transformed.ts).
import { type Orientation, swapsAxes } from '../exif.ts';
import type { Size } from '../geometry.ts';

/** What the picture goes through, in its stored (pre-orientation) pixels. */
export interface PictureGeometry {
  /** The picture as stored in the file. */
  input: Size;
  /** The picture resampled, before the orientation is applied (Plan.stored). */
  stored: Size;
  orientation: Orientation;
}

export interface MapGeometry {
  /** The map resampled, before the orientation. */
  stored: Size;
  /** The map as written, upright. */
  output: Size;
  orientation: Orientation;
}

/** The map's own size out: its size × the picture's out ÷ in, per axis, rounded, at least 1 pixel. */
export function mapGeometry(picture: PictureGeometry, map: Size): MapGeometry {
  const scaled = (mapSide: number, outSide: number, inSide: number) =>
    Math.max(1, Math.min(mapSide, Math.round((mapSide * outSide) / inSide)));
  const stored = {
    width: scaled(map.width, picture.stored.width, picture.input.width),
    height: scaled(map.height, picture.stored.height, picture.input.height),
  };
  const output = swapsAxes(picture.orientation) ? { width: stored.height, height: stored.width } : stored;
  return { stored, output, orientation: picture.orientation };
}
