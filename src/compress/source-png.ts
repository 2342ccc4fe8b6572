// PNG output of a JPEG or WebP input: the PNG writer pulls the input engine's upright rows (no frame is
// gathered), and the reader is closed however the writing ends.
import { inEngine, inEngineAsync } from './engine-errors.ts';
import type { Plan } from './memory-plan.ts';
import type { ImageMetadata } from './metadata.ts';
import type { CompressRequest, CompressResult } from './types.ts';
import type { RowSource } from './png/writer.ts';
import type { Timings } from './timings.ts';

export interface ClosableRowSource extends RowSource {
  close(failed: boolean): void;
}

export async function sourceToPng<R extends ClosableRowSource>(
  request: CompressRequest,
  plan: Plan,
  timings: Timings,
  input: 'JPEG' | 'WebP',
  open: () => R,
  metadataOf: (reader: R) => ImageMetadata,
): Promise<CompressResult> {
  const [{ paletteOf, writeSourcePng }, { metadataChunks }] = await Promise.all([
    import('./png/writer.ts'),
    import('./png/metadata.ts'),
  ]);
  const { width, height } = plan.output;
  const started = performance.now();
  const reader = inEngine(input, open);
  let failed = true;
  try {
    const output = await inEngineAsync(input, () =>
      writeSourcePng(reader, width, height, plan.pngWhole, paletteOf(request), timings, (colourType) =>
        metadataChunks(metadataOf(reader), colourType),
      ),
    );
    failed = false;
    timings.decode = Math.max(0, performance.now() - started - timings.resize - timings.encode);
    return {
      bytes: output.bytes,
      inputFormat: input === 'JPEG' ? 'jpeg' : 'webp',
      format: 'png',
      width,
      height,
      quality: output.paletteQuality ?? 'lossless',
      encodes: output.encodes,
      lossless: false,
      timings,
    };
  } finally {
    reader.close(failed);
  }
}
