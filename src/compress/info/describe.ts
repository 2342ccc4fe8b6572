// The info use case: describe an image without encoding it. The file is checked as a compression checks it
// (type, header, pixel count, completeness: the same 415 and 422), admitted by the memory its preview will
// take, and read twice: its container for what it declares (container.ts), its preview for what it looks
// like (dominant colour, ThumbHash). The metered sequence around it is the compression's (service.ts).
import type { RgbaImage } from '../../../wasm/image.ts';
import type { ImageTier } from '../../accounts/tiers.ts';
import { engineJob } from '../../../wasm/give-way.ts';
import { makeRoom, poolLimitForBudget } from '../../../wasm/instances.ts';
import type { CompressConfig } from '../config.ts';
import { swapsAxes } from '../exif.ts';
import type { InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import { reserveMemory } from '../memory-gate.ts';
import { inspect } from '../pipeline.ts';
import { makePreview } from '../preview/preview.ts';
import { previewMemory } from '../preview/size.ts';
import { dominantColour } from './colour.ts';
import { containerFacts } from './container.ts';
import { exifSummary } from './exif-summary.ts';
import { iccSummary } from './icc.ts';
import { thumbHash } from './thumbhash.ts';
import type { InfoRequest, InfoResult } from './types.ts';

const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

export async function describeAdmitted(
  request: InfoRequest,
  tier: ImageTier,
  config: CompressConfig,
): Promise<InfoResult> {
  const { bytes } = request;
  poolLimitForBudget(config.memoryBudget);
  const { format, header } = inspect(bytes, config.maxInputPixels, true, config.heicInput);
  // A picture whose preview could never fit (a progressive JPEG's coefficients) is described without it.
  const estimate = previewMemory(format, header, bytes.length, config.memoryBudget);
  const started = performance.now();
  const preview =
    estimate <= config.memoryBudget ? await previewAdmitted(request, format, header, estimate, tier, config) : null;
  const previewMs = performance.now() - started;
  const facts = await containerFacts(bytes, format, header);
  const swap = swapsAxes(header.orientation);
  return {
    info: {
      width: swap ? header.height : header.width,
      height: swap ? header.width : header.height,
      format,
      bytes: bytes.length,
      orientation: header.orientation,
      has_alpha: facts.hasAlpha,
      bit_depth: facts.bitDepth,
      icc: facts.icc ? iccSummary(facts.icc) : null,
      hdr: facts.hdr,
      gain_map: facts.gainMap,
      frames: facts.frames,
      duration_ms: facts.durationMs,
      loop: facts.loop,
      exif: facts.exif ? exifSummary(facts.exif, request.metadata === 'keep') : null,
      dominant_color: preview ? dominantColour(preview) : null,
      thumbhash: preview ? base64(thumbHash(preview)) : null,
    },
    timings: { preview: previewMs },
  };
}

/** The preview, once its memory is admitted (free waits for none, pro queues: as a compression). */
async function previewAdmitted(
  request: InfoRequest,
  format: InputFormat,
  header: ImageHeader,
  estimate: number,
  tier: ImageTier,
  config: CompressConfig,
): Promise<RgbaImage> {
  const done = await reserveMemory(tier, estimate, config.memoryBudget);
  try {
    return await engineJob(async () => {
      makeRoom(estimate, 'sr_jpeg');
      return makePreview(request.bytes, format, header);
    });
  } finally {
    done();
  }
}
