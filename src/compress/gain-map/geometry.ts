// The map's geometry, derived from the picture's in one place: whatever the picture goes through, the
// map goes through at its own scale. Today that is the EXIF orientation and the resize; a crop, a
// rotate or a flip (src/compress/transform/) is to be added here, as the crop box scaled to the map's
// pixels and the turns composed with the orientation.
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
