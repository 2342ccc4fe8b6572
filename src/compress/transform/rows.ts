// The row transform: the decoder's upright rows at the resized size in, the output's rows out. Rows
// outside the crop are dropped as they pass and columns sliced (a JPEG's are never decoded: its reader
// hands out the crop's window alone, `origin`); a horizontal mirror is done per row;
// padding is written as background rows and columns. A vertical flip (or rotate=180) reverses the row
// order and rotate=90/270 transposes: those two alone gather the kept block, turned, in one frame at
// the content's size, or in bands of it with a decoder pass each where the plan has no room for the
// whole frame (the memory plan counts either). Blur and sharpen (filters.ts) take the content's rows
// before the padding, over a window of rows. Rows come out as RGBA.
import type { RowProducer } from '../png/writer.ts';
import type { Rgba } from './colour.ts';
import { filterRows } from './filters.ts';
import { forward, needsFrame, type TransformGeometry } from './geometry.ts';
import type { Flip, Rotation } from './options.ts';

/** Upright rows of the resized image: 1 grey, 3 RGB or 4 RGBA channels. */
export interface UprightRows {
  channels: number;
  rows: RowProducer;
  /**
   * Whether a pass may be abandoned part-way (the sink throws) and `rows` run again from the top: the JPEG
   * and WebP engines' readers restart their decoders; the PNG decoder would drop its engine instance.
   */
  stoppable?: boolean;
  /**
   * Where the rows start in the resized image when the source reads only a window of it, the crop (the
   * JPEG engine decodes nothing else): its first row is row `y`, its rows' first column column `x`.
   */
  origin?: { x: number; y: number };
}

/** Thrown into a stoppable source past the crop's last row, so the rows below it are never decoded. */
const PAST_THE_CROP = new Error('past the crop');

/** Every row a pass needs: up to `end` (exclusive), then the source stopped if it can be. */
async function rowsUntil(source: UprightRows, end: number, sink: (row: Uint8Array, y: number) => void | Promise<void>) {
  let y = source.origin?.y ?? 0;
  try {
    await source.rows(async (row) => {
      const at = y++;
      if (at < end) await sink(row, at);
      if (at + 1 >= end && source.stoppable) throw PAST_THE_CROP;
    });
  } catch (err) {
    if (err !== PAST_THE_CROP) throw err;
  }
}

export interface RowTransform {
  geometry: TransformGeometry;
  flip?: Flip;
  rotate: Rotation;
  background: Rgba;
  /** Composite every pixel onto the background (itself onto white): output without alpha (JPEG). */
  flatten: boolean;
  /** The plan's bands of a turned or reversed content too large for one frame (memory-plan.ts). */
  turnBandRows?: number;
  blur?: number;
  sharpen?: number;
}

/** Whether each row is mirrored, for a transform that keeps the row order. */
const mirrors = (flip: Flip | undefined, rotate: Rotation): boolean =>
  (flip === 'h' || flip === 'hv') !== (rotate === 180);

/** The background as the output sees it: onto white when flattening (a JPEG has no alpha). */
function fillOf(t: RowTransform): Rgba {
  const [r, g, b, a] = t.background;
  if (!t.flatten || a === 255) return [r, g, b, a];
  const over = (c: number) => Math.round((c * a + 255 * (255 - a)) / 255);
  return [over(r), over(g), over(b), 255];
}

export function transformRows(source: UprightRows, t: RowTransform): RowProducer {
  const { geometry: g } = t;
  const fill = fillOf(t);
  const fillWord = new Uint32Array(new Uint8Array(fill).buffer)[0]!;
  const outW = g.output.width;
  const { top, left, bottom } = g.padding;
  const cw = g.crop.width;
  const ch = source.channels;
  const firstColumn = g.crop.x - (source.origin?.x ?? 0);
  const block = new Uint8Array(cw * 4);
  const blockWords = new Uint32Array(block.buffer);
  const out = new Uint8Array(outW * 4);
  const outWords = new Uint32Array(out.buffer);

  /** The kept columns of a source row as RGBA, flattened when asked. */
  const slice = (row: Uint8Array) => {
    for (let x = 0, i = firstColumn * ch, o = 0; x < cw; x++, i += ch, o += 4) {
      const r = row[i]!;
      const gr = ch >= 3 ? row[i + 1]! : r;
      const b = ch >= 3 ? row[i + 2]! : r;
      const a = ch === 4 ? row[i + 3]! : 255;
      if (t.flatten && a !== 255) {
        // c·a + fill·(1 − a), rounded: exact for every c and a, cheaper than a division.
        const under = 255 - a;
        block[o] = ((r * a + fill[0] * under + 128) * 257) >>> 16;
        block[o + 1] = ((gr * a + fill[1] * under + 128) * 257) >>> 16;
        block[o + 2] = ((b * a + fill[2] * under + 128) * 257) >>> 16;
        block[o + 3] = 255;
      } else {
        block[o] = r;
        block[o + 1] = gr;
        block[o + 2] = b;
        block[o + 3] = a;
      }
    }
  };

  const background = async (sink: Parameters<RowProducer>[0], count: number) => {
    if (count === 0) return;
    const row = new Uint32Array(outW).fill(fillWord);
    const bytes = new Uint8Array(row.buffer);
    for (let i = 0; i < count; i++) await sink(bytes);
  };

  /** A content row (content.width RGBA words) padded to the output's width. */
  const pad = (sink: Parameters<RowProducer>[0], content: Uint32Array) => {
    if (outW === content.length) return sink(new Uint8Array(content.buffer, content.byteOffset, content.length * 4));
    outWords.fill(fillWord);
    outWords.set(content, left);
    return sink(out);
  };

  /** Where content rows go: through the filters when asked (they hold rows back until `end`), then the padding. */
  const contentRows = (sink: Parameters<RowProducer>[0]) => {
    const filter = filterRows(
      g.content.width,
      g.content.height,
      { blur: t.blur, sharpen: t.sharpen, alpha: !t.flatten },
      (row) => pad(sink, new Uint32Array(row.buffer, row.byteOffset, row.length / 4)),
    );
    if (!filter) return { push: (content: Uint32Array) => pad(sink, content), end: async () => {} };
    return {
      push: (content: Uint32Array) =>
        filter.push(new Uint8Array(content.buffer, content.byteOffset, content.length * 4)),
      end: () => filter.end(),
    };
  };

  if (!needsFrame(t.flip, t.rotate)) {
    const mirror = mirrors(t.flip, t.rotate);
    return async (sink) => {
      await background(sink, top);
      const content = contentRows(sink);
      await rowsUntil(source, g.crop.y + g.crop.height, async (row, at) => {
        if (at < g.crop.y) return;
        slice(row);
        if (mirror) blockWords.reverse();
        await content.push(blockWords);
      });
      await content.end();
      await background(sink, bottom);
    };
  }

  // The content gathered turned, filled as the kept rows pass: pixel (x, y) of the block goes to
  // start + x·dx + y·dy, the flip and rotation being affine. Whole in one frame, or (turnBandRows) a band
  // of the content's rows per pass of the decoder, when the whole frame would not fit the plan.
  const { width: tw, height: th } = g.content;
  const index = (x: number, y: number) => {
    const p = forward(x, y, cw, g.crop.height, t.flip, t.rotate);
    return p.y * tw + p.x;
  };
  const start = index(0, 0);
  const dx = index(1, 0) - start;
  const dy = index(0, 1) - start;
  const band = Math.max(1, Math.min(th, t.turnBandRows ?? th));
  // A quarter turn sends the block's columns to the content's rows; otherwise its rows go to rows: which
  // of them land in the content rows [r0, r1).
  const turns = t.rotate === 90 || t.rotate === 270;
  const rowOf = (x: number, y: number) => Math.floor((start + x * dx + y * dy) / tw);
  return async (sink) => {
    const frame = new Uint32Array(tw * band);
    await background(sink, top);
    const content = contentRows(sink);
    for (let r0 = 0; r0 < th; r0 += band) {
      const r1 = Math.min(th, r0 + band);
      const offset = r0 * tw;
      // The block's columns [x0, x1) that land in the band (all of them when rows do).
      let x0 = 0;
      let x1 = cw;
      if (turns) {
        const a = rowOf(0, 0);
        [x0, x1] = rowOf(1, 0) > a ? [r0 - a, r1 - a] : [a - r1 + 1, a - r0 + 1];
        x0 = Math.max(0, x0);
        x1 = Math.min(cw, x1);
      }
      await rowsUntil(source, g.crop.y + g.crop.height, (row, at) => {
        if (at < g.crop.y) return;
        const y = at - g.crop.y;
        if (!turns) {
          const r = rowOf(0, y);
          if (r < r0 || r >= r1) return;
        }
        slice(row);
        const base = start + y * dy - offset;
        for (let x = x0; x < x1; x++) frame[base + x * dx] = blockWords[x]!;
      });
      for (let r = r0; r < r1; r++) await content.push(frame.subarray((r - r0) * tw, (r - r0 + 1) * tw));
    }
    await content.end();
    await background(sink, bottom);
  };
}
