// The memory plan of AVIF input (src/compress/avif-input/memory.ts and the parts beside it in
// memory-plan.ts), from headers alone: no 12 MP file is decoded here. The measured figures are the AVIF
// decoder module's memory after decoding and reading every row (`npx node test/bench/avifdec-memory.ts`,
// 2026-11-29), of the conversions bench's synthetic photo written by sharp (quality 80, 4:4:4, as the
// bench makes it) and by Debian's avifenc (speed 9).
import { describe, expect, it } from 'vitest';
import { avifDecoderBytes } from '../../src/compress/avif-input/memory.ts';
import type { AvifInfo } from '../../src/compress/avif-input/structure.ts';
import type { ImageHeader } from '../../src/compress/header.ts';
import { DEFAULT_MEMORY_BUDGET_MB } from '../../src/compress/limits.ts';
import { type PlanRequest, plan } from '../../src/compress/memory-plan.ts';

const MiB = 1024 * 1024;
const BUDGET = DEFAULT_MEMORY_BUDGET_MB * MiB;

type Layout = '4:2:0' | '4:4:4';

function avifHeader(width: number, height: number, depth: number, layout: Layout): ImageHeader {
  const subsampled = layout === '4:2:0';
  const info: AvifInfo = {
    codedWidth: width,
    codedHeight: height,
    width,
    height,
    orientation: 1,
    cell: { width, height, count: 1 },
    av1: { depth, monochrome: false, subX: subsampled, subY: subsampled },
    alpha: false,
    frames: 1,
    defect: null,
  };
  return {
    width,
    height,
    orientation: 1,
    hasAlphaChannel: false,
    defect: null,
    avif: { frames: 1, depth, codedPixels: width * height, cells: 1, decoderBytes: avifDecoderBytes(info) },
  };
}

const estimateMb = (header: ImageHeader, upload: number, request: PlanRequest) =>
  plan('avif', header, upload, request, BUDGET).estimate / MiB;

describe('AVIF input: the decoder counted as it measures', () => {
  it.each([
    // width, height, depth, layout, file bytes, the module's memory measured (MiB)
    [2128, 1424, 8, '4:2:0', 180_976, 7.8],
    [2128, 1424, 10, '4:4:4', 184_085, 23.0],
    [4240, 2832, 8, '4:2:0', 633_660, 26.3],
    [4240, 2832, 8, '4:4:4', 2_351_910, 48.0],
    [4240, 2832, 10, '4:2:0', 609_537, 46.2],
    [4240, 2832, 10, '4:4:4', 617_716, 83.8],
    [3120, 4160, 10, '4:4:4', 930_715, 88.0],
    [6000, 4000, 8, '4:4:4', 4_652_060, 91.0],
  ] as const)(
    '%i×%i, %i-bit %s: never under what the module held, at most 12 per cent over it',
    (width, height, depth, layout, file, measured) => {
      // The file's copy in the module is the plan's upload part; the module's memory holds it.
      const planned = (avifHeader(width, height, depth, layout).avif!.decoderBytes + file) / MiB;
      expect(planned).toBeGreaterThanOrEqual(measured);
      expect(planned).toBeLessThanOrEqual(measured * 1.12 + 2);
    },
  );

  it('a 12 MP 8-bit 4:4:4 AVIF (as sharp writes it) is admitted to WebP at full size; to AVIF, and at 24 MP, it is not', () => {
    const header = avifHeader(4240, 2832, 8, '4:4:4');
    const webp = plan('avif', header, 2_351_910, { format: 'webp', quality: 80 }, BUDGET);
    expect(webp.estimate / MiB).toBeLessThanOrEqual(DEFAULT_MEMORY_BUDGET_MB);
    expect([webp.output.width, webp.output.height, webp.resized]).toEqual([4240, 2832, false]);
    expect(webp.webp).toEqual({ lossless: false, lowMemory: true });
    // The conversions bench measured 12 MP → JPEG and → PNG within their estimates already; they stay admitted.
    expect(estimateMb(header, 2_351_910, { format: 'jpeg', quality: 80 })).toBeLessThanOrEqual(
      DEFAULT_MEMORY_BUDGET_MB,
    );
    // Two pictures of the whole image (dav1d's 4:4:4, libaom's 4:2:0) and libaom's cell: over the budget.
    expect(estimateMb(header, 2_351_910, { format: 'avif', quality: 80 })).toBeGreaterThan(DEFAULT_MEMORY_BUDGET_MB);
    // 24 MP of 4:4:4: dav1d's picture and state alone are 92 MiB (the module measured 91.0).
    const big = avifHeader(6000, 4000, 8, '4:4:4');
    for (const format of ['jpeg', 'png', 'webp', 'avif'] as const)
      expect(estimateMb(big, 4_652_060, { format, quality: 80, width: 64 }), format).toBeGreaterThan(
        DEFAULT_MEMORY_BUDGET_MB,
      );
  });

  it('a 12 MP 10-bit 4:2:0 AVIF is admitted to WebP at full size: dav1d holds 16-bit samples, not 2 bytes of state a pixel', () => {
    const header = avifHeader(4240, 2832, 10, '4:2:0');
    const webp = plan('avif', header, 609_537, { format: 'webp', quality: 80 }, BUDGET);
    expect(webp.estimate / MiB).toBeLessThanOrEqual(DEFAULT_MEMORY_BUDGET_MB);
    expect([webp.output.width, webp.output.height, webp.resized]).toEqual([4240, 2832, false]);
  });
});
