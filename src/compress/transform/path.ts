// A transformed compression, from any input to any output: the input engine's upright rows at the
// resized size (JpegRowReader, WebpRowReader, or the PNG row decoder and the engine's resampler) pass
// through the row transform (rows.ts: crop, mirror, turn, pad) into the output's row encoders (the
// JPEG engine's row encoder, the WebP picture, the PNG writer, the AVIF bands). Only a vertical flip or
// a quarter turn gathers a frame, of the output's content, which the plan counts. Never the lossless
// rewrite: a transformed image is always the transformed image.
import { ApiError } from '../../errors.ts';
import { inEngine, inEngineAsync } from '../engine-errors.ts';
import type { Orientation } from '../exif.ts';
import { type InputFormat, rowEncoded } from '../formats.ts';
import type { Plan } from '../memory-plan.ts';
import { jpegMetadata, type ImageMetadata } from '../metadata.ts';
import { PngError } from '../png/chunks.ts';
import type { RowProducer } from '../png/writer.ts';
import { encodeAsRequestedAsync } from '../target-size.ts';
import { resizeRow, timed, type Timings } from '../timings.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { jpegMarkersOf, packWebp, webpMetadata } from '../webp-riff.ts';
import { gravityText } from './options.ts';
import { DEFAULT_BACKGROUND } from './options.ts';
import type { Box } from './geometry.ts';
import { transformRows, type UprightRows } from './rows.ts';

const ENGINE_NAMES = { jpeg: 'JPEG', webp: 'WebP', png: 'PNG', gif: 'GIF', avif: 'AVIF', heic: 'HEIC' } as const;

/** The input's upright rows at the plan's resized size, its metadata for the output, and its alpha. */
interface Opened extends UprightRows {
  metadata: ImageMetadata;
  alpha: boolean;
  /** A GIF's frames: its first is the one transformed (X-Frames). */
  frames?: number;
  close(failed: boolean): void;
}

/**
 * The input's upright rows at the plan's resize (trim.ts reads them once more for trim=border). With a
 * `window` (the crop, in the resized image), a JPEG decodes only the rows and columns it keeps: its
 * rows are the window's (`origin`); the other decoders hand out every row, whole.
 */
export async function openRows(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  orientation: Orientation,
  timings: Timings,
  window?: Box,
): Promise<Opened> {
  const mode = request.metadata ?? 'strip';
  const { stored } = plan;
  if (inputFormat === 'jpeg' && plan.turnBeforeResize) return turnedBeforeResize(request, plan, orientation, timings);
  if (inputFormat === 'jpeg') {
    const { JpegRowReader } = await import('../../../wasm/jpeg-engine.ts');
    const reader = inEngine(
      'JPEG',
      () => new JpegRowReader(request.bytes, plan.scaleNum, stored.width, stored.height, orientation, window),
    );
    return {
      channels: reader.channels,
      rows: (sink) => reader.rows(sink),
      metadata: jpegMetadata(reader.markers, mode),
      alpha: false,
      stoppable: true,
      ...(window ? { origin: { x: window.x, y: window.y } } : {}),
      close: (failed) => reader.close(failed),
    };
  }
  if (inputFormat === 'webp') {
    // An animated WebP's first frame (a still of it), through the PNG path's resampler.
    const { readHeader } = await import('../header.ts');
    const header = readHeader('webp', request.bytes);
    if (header.animation) {
      const [{ rowSource }, { webpFirstFrameInput }] = await Promise.all([
        import('../png/png-path.ts'),
        import('../anim/webp-frames.ts'),
      ]);
      const { input, frames, close } = await webpFirstFrameInput(request.bytes, header, mode);
      return {
        channels: 4,
        rows: rowSource(input, plan, orientation, false, timings),
        metadata: input.metadata,
        alpha: input.hasAlpha,
        frames,
        close,
      };
    }
    const { WebpRowReader } = await import('../../../wasm/webp-engine.ts');
    const reader = inEngine('WebP', () => new WebpRowReader(request.bytes, stored, orientation));
    return {
      channels: reader.channels,
      rows: (sink) => reader.rows(sink),
      metadata: webpMetadata(request.bytes, mode),
      alpha: reader.channels === 4,
      stoppable: true,
      close: (failed) => reader.close(failed),
    };
  }
  if (inputFormat === 'avif') {
    // Decoded by the AVIF decoder into rows that take the PNG path's resampler.
    const [{ rowSource }, { avifRowInput }, { readHeader }] = await Promise.all([
      import('../png/png-path.ts'),
      import('../avif-input/avif-path.ts'),
      import('../header.ts'),
    ]);
    const header = readHeader('avif', request.bytes);
    const { input, close } = await avifRowInput(request.bytes, header, mode);
    return {
      channels: 4,
      rows: rowSource(input, plan, orientation, false, timings),
      metadata: input.metadata,
      alpha: input.hasAlpha,
      frames: header.avif?.frames,
      close,
    };
  }
  if (inputFormat === 'heic') {
    // Decoded by the HEIC decoder a tile row at a time into rows that take the PNG path's resampler.
    const [{ rowSource }, { heicRowInput }, { readHeader }] = await Promise.all([
      import('../png/png-path.ts'),
      import('../heic-input/heic-path.ts'),
      import('../header.ts'),
    ]);
    const { input, close } = await heicRowInput(request.bytes, readHeader('heic', request.bytes), mode);
    return {
      channels: 4,
      rows: rowSource(input, plan, orientation, false, timings),
      metadata: input.metadata,
      alpha: input.hasAlpha,
      close,
    };
  }
  // PNG and GIF: decoded in JavaScript, through the PNG path's resampler.
  const { pngRowInput, rowSource } = await import('../png/png-path.ts');
  const gif = inputFormat === 'gif' ? (await import('../gif/gif-path.ts')).gifRowInput(request.bytes) : undefined;
  const input = gif?.input ?? (await pngRowInput(request.bytes, mode));
  return {
    channels: 4,
    rows: rowSource(input, plan, orientation, false, timings),
    metadata: input.metadata,
    alpha: input.hasAlpha,
    frames: gif?.frames,
    close: () => {},
  };
}

/**
 * A JPEG stored turned, enlarged (the plan's `turnBeforeResize`): the engine turns a frame of the
 * decoded image, and its upright rows are resized as they come by the engine's resampler, so the
 * larger frame of the resized window is never held. Every row of the resized image is made; the
 * transform slices the crop out of them.
 */
async function turnedBeforeResize(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  timings: Timings,
): Promise<Opened> {
  const [{ JpegRowReader }, { EngineRowResizer }] = await Promise.all([
    import('../../../wasm/jpeg-engine.ts'),
    import('../../../wasm/row-resizer.ts'),
  ]);
  const decoded = plan.turnBeforeResize!;
  const { resized } = plan.transform!;
  const reader = inEngine(
    'JPEG',
    () => new JpegRowReader(request.bytes, plan.scaleNum, decoded.width, decoded.height, orientation),
  );
  const { width, height, channels } = reader;
  return {
    channels: 4,
    rows: async (sink) => {
      const resizer = new EngineRowResizer(width, height, resized.width, resized.height, false);
      const rgba = new Uint8Array(width * 4).fill(255);
      const out = new Uint8Array(resized.width * 4);
      // The consumer may stop the rows past its crop by throwing: the resampler is sound then.
      let failed = true;
      let stopped = false;
      try {
        await reader.rows(async (row) => {
          timed(timings, 'resize', () => {
            for (let x = 0, i = 0, o = 0; x < width; x++, i += channels, o += 4) {
              rgba[o] = row[i]!;
              rgba[o + 1] = row[i + (channels === 3 ? 1 : 0)]!;
              rgba[o + 2] = row[i + (channels === 3 ? 2 : 0)]!;
            }
          });
          await resizeRow(resizer, rgba, out, timings, async (resizedRow) => {
            try {
              await sink(resizedRow);
            } catch (err) {
              stopped = true;
              throw err;
            }
          });
        });
        failed = false;
      } finally {
        resizer.close(failed && !stopped);
      }
    },
    metadata: jpegMetadata(reader.markers, request.metadata ?? 'strip'),
    alpha: false,
    stoppable: true,
    close: (failed) => reader.close(failed),
  };
}

export async function compressTransformed(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  orientation: Orientation,
): Promise<CompressResult> {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  const transform = request.transform!;
  const geometry = plan.transform!;
  const engine = ENGINE_NAMES[inputFormat];
  const started = performance.now();
  let source: Opened | undefined;
  let failed = true;
  try {
    const { crop, resized } = geometry;
    const cropped = crop.width < resized.width || crop.height < resized.height;
    source = await openRows(request, plan, inputFormat, orientation, timings, cropped ? crop : undefined);
    const background = transform.background ?? DEFAULT_BACKGROUND;
    const padded =
      geometry.output.width !== geometry.content.width || geometry.output.height !== geometry.content.height;
    const alpha = request.format !== 'jpeg' && (source.alpha || (padded && background[3] !== 255));
    const produce = transformRows(source, {
      geometry,
      flip: transform.flip,
      rotate: transform.rotate,
      background,
      flatten: !alpha,
      turnBandRows: plan.turnBandRows,
      blur: transform.blur,
      sharpen: transform.sharpen,
    });
    const encoded = await inEngineAsync(engine, () =>
      encodeRows(request, plan, inputFormat, produce, alpha, source!.metadata, timings),
    );
    failed = false;
    timings.decode = Math.max(0, performance.now() - started - timings.resize - timings.encode);
    const { width, height } = geometry.output;
    return {
      ...encoded,
      inputFormat,
      format: request.format,
      width,
      height,
      // No never-bigger rewrite here: only lossless WebP is lossless.
      lossless: encoded.quality === 'lossless' && request.format === 'webp',
      timings,
      ...(geometry.sourceCrop ? { crop: { box: geometry.sourceCrop, gravity: gravityText(transform.gravity) } } : {}),
      ...(source.frames !== undefined ? { frames: { written: 1, total: source.frames } } : {}),
    };
  } catch (err) {
    if (err instanceof PngError)
      throw new ApiError('unprocessable_image', `the PNG cannot be decoded: ${err.message}`, { param: 'image' });
    throw err;
  } finally {
    source?.close(failed);
  }
}

type Encoded = Pick<CompressResult, 'bytes' | 'quality' | 'encodes' | 'targetReached'>;

/** The transformed RGBA rows written as the requested format by its row encoder. */
async function encodeRows(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  produce: RowProducer,
  alpha: boolean,
  metadata: ImageMetadata,
  timings: Timings,
): Promise<Encoded> {
  const { width, height } = plan.output;
  if (request.format === 'jpeg') {
    const { jpegFromRows } = await import('../png/png-path.ts');
    const markers = jpegMarkersOf(metadata);
    // Each try of a size target pulls the rows again: no frame is kept for it.
    return encodeAsRequestedAsync(
      (quality) => jpegFromRows(produce, width, height, false, quality, markers, timings, plan.streamRows === true),
      request.quality,
      request.targetKb,
    );
  }
  if (request.format === 'webp') {
    const { webpFromRows } = await import('../png/png-path.ts');
    // The plan may keep a lossless WebP input lossless, as the untransformed path does.
    const lossless = request.lossless === true || plan.webp?.lossless === true;
    const encoded = await webpFromRows(produce, plan, alpha, { ...request, lossless }, timings);
    return { ...encoded, bytes: packWebp(encoded.bytes, metadata, width, height) };
  }
  if (rowEncoded(request.format)) {
    const { encodeAvif } = await import('../avif-path.ts');
    const channels = alpha ? 4 : 3;
    return encodeAvif(
      request,
      { ...plan, avifChannels: channels },
      inputFormat,
      channels,
      { channels: 4, produce, metadata },
      timings,
    );
  }
  const [{ losslessLayout, paletteOf, writePng }, { metadataChunks }] = await Promise.all([
    import('../png/writer.ts'),
    import('../png/metadata.ts'),
  ]);
  const output = await writePng({
    width,
    height,
    layout: losslessLayout(width, height, false, alpha),
    produce: () => produce,
    optimiseWhole: plan.pngWhole,
    palette: paletteOf(request),
    chunksFor: (colourType) => metadataChunks(metadata, colourType),
    timing: timings,
  });
  return { bytes: output.bytes, quality: output.paletteQuality ?? 'lossless', encodes: output.encodes };
}
