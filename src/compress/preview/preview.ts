// A small upright picture of any input, for what needs to look at the whole image but not at its detail:
// the info's dominant colour and ThumbHash, and the smart crop's saliency. It must cost next to nothing
// beside the request it serves: a JPEG is decoded at the smallest DCT scale that covers it (1/8 for a
// camera photo: only the DC coefficients are inverse-transformed), a WebP through the engine's row reader
// resampled as it streams, a PNG in rows averaged into cells as they pass. Memory is bounded by rows,
// whatever the input's size; the preview itself is at most PREVIEW_MAX_SIDE² pixels.
import type { RgbaImage } from '../../../wasm/image.ts';
import { ApiError } from '../../errors.ts';
import { inEngine, inEngineAsync } from '../engine-errors.ts';
import { swapsAxes } from '../exif.ts';
import type { InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import { fitWithin } from '../geometry.ts';
import { dctScale } from '../memory-plan.ts';
import { applyOrientation } from '../pixels.ts';
import { type OpenedRowInput, usingRowInput } from '../row-input.ts';
import { PREVIEW_MAX_SIDE, previewSize } from './size.ts';

// Its size lives apart, so a plan can count a preview without loading the engines (size.ts).
export { PREVIEW_MAX_SIDE, previewSize } from './size.ts';

/** The preview of an input whose header was read (and checked) already: RGBA, upright. */
export async function makePreview(bytes: Uint8Array, format: InputFormat, header: ImageHeader): Promise<RgbaImage> {
  const upright = previewSize(header);
  const stored = swapsAxes(header.orientation) ? { width: upright.height, height: upright.width } : upright;
  if (format === 'jpeg') {
    const { JpegRowReader } = await import('../../../wasm/jpeg-engine.ts');
    const scale = dctScale(header, stored);
    return readRows('JPEG', () => new JpegRowReader(bytes, scale, stored.width, stored.height, header.orientation));
  }
  if (format === 'webp' && header.animation) return webpAnimPreview(bytes, header);
  if (format === 'webp') {
    const { WebpRowReader } = await import('../../../wasm/webp-engine.ts');
    return readRows('WebP', () => new WebpRowReader(bytes, stored, header.orientation));
  }
  if (format === 'png') return pngPreview(bytes, header);
  if (format === 'gif') return gifPreview(bytes);
  if (format === 'avif') return heifPreview('avif', bytes, header);
  if (format === 'heic') return heifPreview('heic', bytes, header);
  // A format added to InputFormat must say how its preview is made.
  const unknown: never = format;
  throw new Error(`no preview for ${String(unknown)}`);
}

interface RowReader {
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  rows(sink: (row: Uint8Array) => void): Promise<void>;
  close(failed: boolean): void;
}

/** An engine reader's upright rows (grey, RGB or RGBA) gathered as RGBA. */
async function readRows(input: 'JPEG' | 'WebP', open: () => RowReader): Promise<RgbaImage> {
  const reader = inEngine(input, open);
  let failed = true;
  try {
    const { width, height, channels } = reader;
    const data = new Uint8Array(width * height * 4);
    let o = 0;
    await inEngineAsync(input, () =>
      reader.rows((row) => {
        for (let i = 0; i < width * channels; i += channels, o += 4) {
          data[o] = row[i]!;
          data[o + 1] = row[i + (channels >= 3 ? 1 : 0)]!;
          data[o + 2] = row[i + (channels >= 3 ? 2 : 0)]!;
          data[o + 3] = channels === 4 ? row[i + 3]! : 255;
        }
      }),
    );
    failed = false;
    return { data, width, height };
  } finally {
    reader.close(failed);
  }
}

/**
 * Rows of RGBA averaged over the source area each preview pixel covers (the preview at its full size,
 * PREVIEW_MAX_SIDE on the long side, as a JPEG's and a WebP's are: whole blocks of k × k pixels fell up
 * to a sixth short of it, and the face detector lost small faces there) as they are decoded: two rows of
 * sums are held, whatever the height, since a source row may straddle two preview rows. Colours are
 * weighted by alpha, so a transparent pixel's colour does not bleed into its cell.
 */
async function blockAverage(
  srcWidth: number,
  srcHeight: number,
  decodeRows: (onRow: (row: Uint8Array, y: number) => void) => Promise<void>,
): Promise<RgbaImage> {
  const { width, height } = fitWithin(
    { width: srcWidth, height: srcHeight },
    { width: PREVIEW_MAX_SIDE, height: PREVIEW_MAX_SIDE },
  );
  // Source pixels per preview pixel, at least 1 (never enlarged): a source pixel falls in one cell, or
  // across the border of two.
  const fx = srcWidth / width;
  const fy = srcHeight / height;
  const column = new Int32Array(srcWidth);
  const columnShare = new Float64Array(srcWidth);
  for (let x = 0; x < srcWidth; x++) {
    const c = Math.min(width - 1, Math.floor(x / fx));
    column[x] = c;
    columnShare[x] = c === width - 1 ? 1 : Math.min(1, (c + 1) * fx - x);
  }
  const data = new Uint8Array(width * height * 4);
  let sums = new Float64Array(width * 4);
  let weights = new Float64Array(width);
  let nextSums = new Float64Array(width * 4);
  let nextWeights = new Float64Array(width);
  let oy = 0;
  const add = (row: Uint8Array, into: Float64Array, weightsInto: Float64Array, share: number) => {
    for (let x = 0; x < srcWidth; x++) {
      const i = x * 4;
      const a = row[i + 3]!;
      const c = column[x]!;
      const left = columnShare[x]! * share;
      const parts = left < share ? 2 : 1;
      for (let part = 0; part < parts; part++) {
        const w = part === 0 ? left : share - left;
        const s = (c + part) * 4;
        into[s]! += row[i]! * a * w;
        into[s + 1]! += row[i + 1]! * a * w;
        into[s + 2]! += row[i + 2]! * a * w;
        into[s + 3]! += a * w;
        weightsInto[c + part]! += w;
      }
    }
  };
  const flush = () => {
    for (let x = 0; x < width; x++) {
      const a = sums[x * 4 + 3]!;
      const o = (oy * width + x) * 4;
      for (let c = 0; c < 3; c++) data[o + c] = a > 0 ? Math.round(sums[x * 4 + c]! / a) : 0;
      data[o + 3] = weights[x]! > 0 ? Math.round(a / weights[x]!) : 0;
    }
    [sums, nextSums] = [nextSums, sums];
    [weights, nextWeights] = [nextWeights, weights];
    nextSums.fill(0);
    nextWeights.fill(0);
    oy++;
  };
  await decodeRows((row, y) => {
    if (oy >= height) return;
    // The share of this source row in the preview row being summed; the rest belongs to the next.
    const share = oy === height - 1 ? 1 : Math.min(1, Math.max(0, (oy + 1) * fy - y));
    add(row, sums, weights, share);
    if (share < 1) add(row, nextSums, nextWeights, 1 - share);
    if (y + 1 >= (oy + 1) * fy - 1e-9 || y + 1 === srcHeight) flush();
  });
  return { data, width, height };
}

/** A PNG's rows averaged in blocks, turned upright at the end (a preview is small). */
async function pngPreview(bytes: Uint8Array, header: ImageHeader): Promise<RgbaImage> {
  const [{ decodeRows, readPngInfo }, { PngError }] = await Promise.all([
    import('../png/decoder.ts'),
    import('../png/chunks.ts'),
  ]);
  try {
    const info = readPngInfo(bytes);
    const preview = await blockAverage(info.width, info.height, (onRow) => decodeRows(info, onRow));
    return applyOrientation(preview, header.orientation);
  } catch (err) {
    if (err instanceof PngError)
      throw new ApiError('unprocessable_image', `the PNG cannot be decoded: ${err.message}`, { param: 'image' });
    throw err;
  }
}

/**
 * An AVIF's or a HEIC's picture (its clean aperture), through its decoder module's row input (AVIF decoded
 * whole, HEIC a tile row at a time), averaged in blocks as its rows pass.
 */
async function heifPreview(format: 'avif' | 'heic', bytes: Uint8Array, header: ImageHeader): Promise<RgbaImage> {
  const opened =
    format === 'avif'
      ? await (await import('../avif-input/avif-path.ts')).avifRowInput(bytes, header, 'strip')
      : await (await import('../heic-input/heic-path.ts')).heicRowInput(bytes, header, 'strip');
  return applyOrientation(await rowInputPreview(opened), header.orientation);
}

/** An animated WebP's first frame (what a still of it writes), composed on its canvas, averaged in blocks. */
async function webpAnimPreview(bytes: Uint8Array, header: ImageHeader): Promise<RgbaImage> {
  const { webpFirstFrameInput } = await import('../anim/webp-frames.ts');
  return rowInputPreview(await webpFirstFrameInput(bytes, header, 'strip'));
}

/** A decoder module's row input averaged in blocks as its rows pass; the decoder closed however it ends. */
function rowInputPreview(opened: OpenedRowInput): Promise<RgbaImage> {
  let y = 0;
  return usingRowInput(opened, (input) =>
    blockAverage(input.width, input.height, (onRow) => input.decodeRows((row) => onRow(row, y++), {})),
  );
}

/** A GIF's first frame (what its compression writes), composed on its screen, averaged in blocks. */
async function gifPreview(bytes: Uint8Array): Promise<RgbaImage> {
  const [{ decodeFirstFrameRows }, { GifError, readGifStructure }] = await Promise.all([
    import('../gif/decoder.ts'),
    import('../gif/structure.ts'),
  ]);
  try {
    const info = readGifStructure(bytes);
    if (info.frames.length === 0) throw new GifError('it has no image');
    return await blockAverage(info.width, info.height, (onRow) => decodeFirstFrameRows(bytes, info, onRow));
  } catch (err) {
    if (err instanceof GifError)
      throw new ApiError('unprocessable_image', `the GIF cannot be decoded: ${err.message}`, { param: 'image' });
    throw err;
  }
}
