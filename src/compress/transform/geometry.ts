// The geometry of a transformation, from the upright source size and the options alone (no pixels):
// the size the source is resized to, the crop box in resized and in source pixels, the padding, the
// output size. Order of operations (Cloudflare's and sharp's): EXIF orientation, flip, rotate, then the
// fit into `width` × `height`, which are the output's axes. A flip and a rotation commute with a resize,
// so the pipeline resizes the upright source and crops it, and turns only the kept block (rows.ts).
// A trim comes first of all, on the upright source: the fit is of what it keeps, and the whole source
// is resized at that scale so the trim is one more crop of the resized rows.
import { fitWithin, type Size } from '../geometry.ts';
import type { FitMode, Flip, Gravity, Rotation, Trim } from './options.ts';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Padding {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

export interface TransformGeometry {
  /** The upright source resized to this (before the flip and rotation). */
  resized: Size;
  /** The block of `resized` that is kept; the whole of it when nothing is cropped. */
  crop: Box;
  /** The same block in upright source pixels; null when nothing is cropped. */
  sourceCrop: Box | null;
  /** The kept block after the flip and rotation. */
  content: Size;
  padding: Padding;
  output: Size;
}

export interface GeometryRequest {
  fit: FitMode;
  gravity: Gravity;
  rotate: Rotation;
  flip?: Flip;
  /** The box in output pixels (after dpr); either side may be open where the fit allows it. */
  width?: number;
  height?: number;
  /** Sides cut from the upright source; `border` is planned as no trim until the border is found (trim.ts). */
  trim?: Trim;
}

const NO_PADDING: Padding = { top: 0, right: 0, bottom: 0, left: 0 };

/** Whether the rows must be gathered: their order changes (vertical flip, rotate=180) or they turn into columns. */
export function needsFrame(flip: Flip | undefined, rotate: Rotation): boolean {
  if (rotate === 90 || rotate === 270) return true;
  const vertical = flip === 'v' || flip === 'hv';
  return vertical !== (rotate === 180);
}

export const swapsForRotation = (rotate: Rotation): boolean => rotate === 90 || rotate === 270;

/** The resize of `turned` (the source as the output's axes see it) and the block of it kept. */
function fitted(turned: Size, r: GeometryRequest): { resized: Size; crop: Size; pad: Size | null } {
  const bw = r.width;
  const bh = r.height;
  const scaled = (s: number): Size => ({
    width: Math.max(1, Math.round(turned.width * s)),
    height: Math.max(1, Math.round(turned.height * s)),
  });
  switch (r.fit) {
    case 'scale-down': {
      const size = fitWithin(turned, { width: bw, height: bh });
      return { resized: size, crop: size, pad: null };
    }
    case 'contain':
    case 'pad': {
      const s = Math.min(bw ? bw / turned.width : Infinity, bh ? bh / turned.height : Infinity);
      const size = Number.isFinite(s)
        ? { width: Math.min(bw ?? Infinity, scaled(s).width), height: Math.min(bh ?? Infinity, scaled(s).height) }
        : turned;
      return { resized: size, crop: size, pad: r.fit === 'pad' ? { width: bw!, height: bh! } : null };
    }
    case 'squeeze': {
      const size = { width: bw!, height: bh! };
      return { resized: size, crop: size, pad: null };
    }
    case 'cover':
    case 'crop': {
      const cover = Math.max(bw! / turned.width, bh! / turned.height);
      // crop never enlarges: sharp's cover with withoutEnlargement.
      const s = r.fit === 'crop' ? Math.min(1, cover) : cover;
      const size = s === 1 ? turned : scaled(s);
      // Rounding may leave a side a pixel short of the box; the fill is what cover promises.
      const resized =
        r.fit === 'cover' ? { width: Math.max(bw!, size.width), height: Math.max(bh!, size.height) } : size;
      return {
        resized,
        crop: { width: Math.min(bw!, resized.width), height: Math.min(bh!, resized.height) },
        pad: null,
      };
    }
  }
}

/** Where a `crop` block sits in `space` as the gravity says. */
export function place(space: Size, crop: Size, gravity: Gravity): { x: number; y: number } {
  const dx = space.width - crop.width;
  const dy = space.height - crop.height;
  if (typeof gravity !== 'string') {
    const clamp = (v: number, max: number) => Math.max(0, Math.min(max, v));
    return {
      x: clamp(Math.round(gravity.x * space.width - crop.width / 2), dx),
      y: clamp(Math.round(gravity.y * space.height - crop.height / 2), dy),
    };
  }
  // An odd overflow has two middles: the later one (further right or down), as sharp takes, so a centre crop of fine
  // texture is the same pixels as sharp's rather than one off (SSIM 0.59 instead of 0.96 on a beach photo).
  const x = gravity.endsWith('left') ? 0 : gravity.endsWith('right') ? dx : Math.ceil(dx / 2);
  const y = gravity.startsWith('top') ? 0 : gravity.startsWith('bottom') ? dy : Math.ceil(dy / 2);
  return { x, y };
}

/** A point of a `w` × `h` image after the flip, then the rotation (clockwise); returns the new point. */
export function forward(x: number, y: number, w: number, h: number, flip: Flip | undefined, rotate: Rotation) {
  if (flip === 'h' || flip === 'hv') x = w - 1 - x;
  if (flip === 'v' || flip === 'hv') y = h - 1 - y;
  switch (rotate) {
    case 90:
      return { x: h - 1 - y, y: x };
    case 180:
      return { x: w - 1 - x, y: h - 1 - y };
    case 270:
      return { x: y, y: w - 1 - x };
    default:
      return { x, y };
  }
}

/** The point of the `w` × `h` image (before the flip and rotation) that lands on (x, y) after them. */
export function backward(x: number, y: number, w: number, h: number, flip: Flip | undefined, rotate: Rotation) {
  let p: { x: number; y: number };
  switch (rotate) {
    case 90:
      p = { x: y, y: h - 1 - x };
      break;
    case 180:
      p = { x: w - 1 - x, y: h - 1 - y };
      break;
    case 270:
      p = { x: w - 1 - y, y: x };
      break;
    default:
      p = { x, y };
  }
  if (flip === 'h' || flip === 'hv') p.x = w - 1 - p.x;
  if (flip === 'v' || flip === 'hv') p.y = h - 1 - p.y;
  return p;
}

export function transformGeometry(upright: Size, r: GeometryRequest): TransformGeometry {
  const t = typeof r.trim === 'object' ? r.trim : null;
  if (!t || t.top + t.right + t.bottom + t.left === 0) return untrimmed(upright, r);
  const kept = {
    width: Math.max(1, upright.width - t.left - t.right),
    height: Math.max(1, upright.height - t.top - t.bottom),
  };
  const g = untrimmed(kept, r);
  const sx = g.resized.width / kept.width;
  const sy = g.resized.height / kept.height;
  const resized = {
    width: Math.max(g.resized.width, Math.round(upright.width * sx)),
    height: Math.max(g.resized.height, Math.round(upright.height * sy)),
  };
  const crop: Box = {
    x: Math.min(resized.width - g.crop.width, Math.round(t.left * sx) + g.crop.x),
    y: Math.min(resized.height - g.crop.height, Math.round(t.top * sy) + g.crop.y),
    width: g.crop.width,
    height: g.crop.height,
  };
  return { ...g, resized, crop, sourceCrop: sourceBox(crop, resized, upright) };
}

/** The sides a trim leaves nothing between, or null when it keeps some of the image. */
export function trimmedAway(upright: Size, trim: Trim | undefined): 'width' | 'height' | null {
  if (typeof trim !== 'object') return null;
  if (trim.left + trim.right >= upright.width) return 'width';
  if (trim.top + trim.bottom >= upright.height) return 'height';
  return null;
}

function untrimmed(upright: Size, r: GeometryRequest): TransformGeometry {
  const swap = swapsForRotation(r.rotate);
  const turned = swap ? { width: upright.height, height: upright.width } : upright;
  const fit = fitted(turned, r);
  const resizedTurned = fit.resized;
  const resized = swap ? { width: resizedTurned.height, height: resizedTurned.width } : resizedTurned;
  const cropped = fit.crop.width < resizedTurned.width || fit.crop.height < resizedTurned.height;
  // The crop is placed in the output's axes (gravity `top` is the output's top), then carried back to
  // the upright resized image, where the rows are.
  const at = place(resizedTurned, fit.crop, r.gravity);
  const a = backward(at.x, at.y, resized.width, resized.height, r.flip, r.rotate);
  const b = backward(
    at.x + fit.crop.width - 1,
    at.y + fit.crop.height - 1,
    resized.width,
    resized.height,
    r.flip,
    r.rotate,
  );
  const crop: Box = {
    x: Math.min(a.x, b.x),
    y: Math.min(a.y, b.y),
    width: Math.abs(a.x - b.x) + 1,
    height: Math.abs(a.y - b.y) + 1,
  };
  const content = fit.crop;
  const output = fit.pad ?? content;
  const padding = fit.pad
    ? (() => {
        const left = Math.floor((output.width - content.width) / 2);
        const top = Math.floor((output.height - content.height) / 2);
        return {
          top,
          left,
          right: output.width - content.width - left,
          bottom: output.height - content.height - top,
        };
      })()
    : NO_PADDING;
  return {
    resized,
    crop,
    sourceCrop: cropped ? sourceBox(crop, resized, upright) : null,
    content,
    padding,
    output,
  };
}

/** A box of the resized image in the upright source's pixels. */
function sourceBox(box: Box, resized: Size, upright: Size): Box {
  const sx = upright.width / resized.width;
  const sy = upright.height / resized.height;
  const x = Math.min(upright.width - 1, Math.round(box.x * sx));
  const y = Math.min(upright.height - 1, Math.round(box.y * sy));
  return {
    x,
    y,
    width: Math.max(1, Math.min(upright.width, Math.round((box.x + box.width) * sx)) - x),
    height: Math.max(1, Math.min(upright.height, Math.round((box.y + box.height) * sy)) - y),
  };
}
