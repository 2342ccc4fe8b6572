// GIF pixels. `decodeFirstFrameRows` streams the first frame as RGBA rows of the logical screen, the way
// PNG rows stream (png/decoder.ts): the frame's pixels inside its rectangle, transparent outside it and
// where its transparency index is. A non-interlaced frame needs one row of indices; an interlaced one
// gives its rows out of order, so the indices of its visible part (at most its width × height, a byte
// each) are kept until the last pass. `composeFrames` draws every frame in turn on a screen-sized
// canvas, applying each frame's disposal method before the next: animated WebP output (gif-path.ts
// gifFrames, anim/anim-path.ts).
//
// The screen starts transparent and disposal method 2 clears to transparent, as browsers draw GIFs: the
// background colour index is not used.
import { giveWay } from '../../../wasm/give-way.ts';
import { LzwDecoder } from './lzw.ts';
import { rowOrder, visibleRect, type GifFrame, type GifInfo } from './structure.ts';

/** The frame's colour table as RGBA, 256 entries: transparent at its transparency index, opaque black past its end. */
function rgbaTable(frame: GifFrame): Uint32Array {
  const table = new Uint32Array(256);
  const view = new Uint8Array(table.buffer);
  const entries = frame.palette.length / 3;
  for (let i = 0; i < 256; i++) {
    // An index past the table is an error in the file; black, as the PNG decoder gives for its palettes.
    if (i < entries) view.set(frame.palette.subarray(i * 3, i * 3 + 3), i * 4);
    view[i * 4 + 3] = 255;
  }
  if (frame.transparentIndex !== null) table[frame.transparentIndex] = 0;
  return table;
}

/**
 * Calls `onRow` with each row of the logical screen, top to bottom, as RGBA (one buffer reused: copy
 * what must outlive the call), showing the first frame. Waits for `onRow`'s promise before the next row.
 */
export async function decodeFirstFrameRows(
  bytes: Uint8Array,
  info: GifInfo,
  onRow: (row: Uint8Array, y: number) => void | Promise<void>,
): Promise<void> {
  const frame = info.frames[0]!;
  const { width, height } = info;
  const row = new Uint8Array(width * 4);
  const pixels = new Uint32Array(row.buffer);
  const table = rgbaTable(frame);
  const { x0, x1, y0, y1 } = visibleRect(info, frame);
  const visibleWidth = x1 - x0;
  const lzw = new LzwDecoder(bytes, frame.dataAt, frame.minCodeSize);
  const indices = new Uint8Array(frame.width);
  const paint = (line: Uint8Array): void => {
    for (let x = 0; x < visibleWidth; x++) pixels[x0 + x] = table[line[x]!]!;
  };
  const emptyRow = async (y: number): Promise<void> => {
    pixels.fill(0);
    await onRow(row, y);
  };

  let y = 0;
  for (; y < y0; y++) await emptyRow(y);
  if (!frame.interlaced) {
    // Rows come in display order: each is drawn as soon as it is decoded; the rows below the screen are never decoded.
    for (; y < y1; y++) {
      lzw.read(indices, frame.width);
      pixels.fill(0);
      paint(indices);
      await onRow(row, y);
      await giveWay(width);
    }
  } else {
    const kept = new Uint8Array(visibleWidth * (y1 - y0));
    const order = rowOrder(frame.height, true);
    for (let i = 0; i < frame.height; i++) {
      lzw.read(indices, frame.width);
      const fy = order[i]!;
      if (frame.top + fy < y1) kept.set(indices.subarray(0, visibleWidth), fy * visibleWidth);
      await giveWay(frame.width);
    }
    for (; y < y1; y++) {
      pixels.fill(0);
      paint(kept.subarray((y - y0) * visibleWidth, (y - y0 + 1) * visibleWidth));
      await onRow(row, y);
      await giveWay(width);
    }
  }
  for (; y < height; y++) await emptyRow(y);
}

/**
 * Draws every frame (up to MAX_GIF_FRAMES) on a transparent canvas of the logical screen and calls
 * `onFrame` with the canvas (RGBA, reused: copy what must outlive the call) once each frame is drawn; the
 * frame's disposal method is applied after the call, before the next frame is drawn. Transparent pixels
 * of a frame leave the canvas as it was.
 */
export async function composeFrames(
  bytes: Uint8Array,
  info: GifInfo,
  onFrame: (canvas: Uint8Array, frame: GifFrame, index: number) => void | Promise<void>,
): Promise<void> {
  const { width } = info;
  const canvas = new Uint8Array(info.width * info.height * 4);
  const pixels = new Uint32Array(canvas.buffer);
  for (const [index, frame] of info.frames.entries()) {
    const { x0, x1, y0, y1 } = visibleRect(info, frame);
    const visibleWidth = x1 - x0;
    // Disposal 3 restores the rectangle as it was before this frame.
    let saved: Uint32Array | null = null;
    if (frame.disposal === 3) {
      saved = new Uint32Array(visibleWidth * (y1 - y0));
      for (let y = y0; y < y1; y++) saved.set(pixels.subarray(y * width + x0, y * width + x1), (y - y0) * visibleWidth);
    }
    const table = rgbaTable(frame);
    const lzw = new LzwDecoder(bytes, frame.dataAt, frame.minCodeSize, index + 1);
    const indices = new Uint8Array(frame.width);
    const order = rowOrder(frame.height, frame.interlaced);
    for (let i = 0; i < frame.height; i++) {
      const y = frame.top + order[i]!;
      // Non-interlaced rows below the screen are the last ones: nothing left to draw.
      if (!frame.interlaced && y >= y1) break;
      lzw.read(indices, frame.width);
      if (y >= y1) continue;
      const at = y * width + x0;
      for (let x = 0; x < visibleWidth; x++) {
        // Only the transparency index maps to 0 (every other entry is opaque): it leaves the canvas as it was.
        const colour = table[indices[x]!]!;
        if (colour !== 0) pixels[at + x] = colour;
      }
      await giveWay(frame.width);
    }
    await onFrame(canvas, frame, index);
    if (frame.disposal === 2) {
      for (let y = y0; y < y1; y++) pixels.fill(0, y * width + x0, y * width + x1);
    } else if (saved) {
      for (let y = y0; y < y1; y++)
        pixels.set(saved.subarray((y - y0) * visibleWidth, (y - y0 + 1) * visibleWidth), y * width + x0);
    }
  }
}
