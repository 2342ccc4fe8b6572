// The AVIF encoder's settings in one place: the libaom speed and options every encode uses, and the grid
// a picture is split into so that libaom's working memory is that of one cell. The API's `quality` is
// mapped to libavif's scale beside the other formats' (src/compress/quality-scale.ts). The figures behind each value (`npm run bench -- avif`) are in the
// AVIF part of wasm/README.md.

export interface AvifSettings {
  /** libavif's quality, 0–100. */
  quality: number;
  /** libaom's cpu-used, 0–10. */
  speed: number;
  /** libaom settings by their aomenc names. */
  options: ReadonlyArray<readonly [string, string]>;
}

/**
 * libaom's speed: 6. Against 7, 6 % fewer bytes at equal SSIMULACRA2 (6 photos at width 2048; 3 % at
 * 1024) for about twice the CPU (a 1024 × 680 photo's 256-pixel cells: 107–144 ms against 55–68;
 * test/bench/avif-cells.ts). Speed 7 was kept while a cell was one call that held the isolate (its probes'
 * p95 on the isolate-stall bench was 665 ms at speed 6 against 190–253, target 250); since libaom gives
 * way after every superblock (patches/aom/0101), what another request waits for is a 64 × 64 superblock,
 * a few milliseconds at either speed. Speed 5 took 5 × speed 6's time for about 5 % fewer bytes; speed 6
 * here has part of its search back (patches/aom/0102: the refinement of the best few modes and three intra
 * searches), 2.8 % fewer bytes for about 1.5 × the CPU. The figures:
 * docs/experiments/avif-and-quality-scale.md.
 */
export const AVIF_SPEED = 6;

/**
 * Bits a sample of the coded picture: 10. The rows are 8-bit and the picture is held as 8-bit YUV; each
 * cell is widened to 10 bits as libaom encodes it, whose high bit depth path predicts, transforms and
 * filters at that precision: on the 6 search photos at width 2048, 5 % fewer bytes at our JPEG q80's
 * SSIMULACRA2 (0.770 × that JPEG's bytes against 0.810 × at 8 bits) for the same CPU (1.00 ×, 0.92–1.09
 * a photo) and 15 bytes a pixel more of a cell's memory (AVIF_WIDE_CELL_BYTES_PER_PIXEL); the module is
 * 0.22 MB larger gzipped (docs/experiments/avif-and-quality-scale.md). The memory plan chooses it where
 * it fits the budget, else 8 (more bytes rather than a refusal); an encode with intra block copy (screen
 * content, not measured at 10 bits) and a picture with a gain map (sr_avif.c) are coded at 8.
 */
export const AVIF_DEPTH: 8 | 10 = 10;

/**
 * libaom's speed for the encodes of a size target's search (`target_kb`: up to MAX_TARGET_ENCODES of
 * them): 7, half speed 6's CPU, so that eight encodes of a 24 MP photo (about 27 s each at 7, twice that
 * at 6) stay inside the Worker's CPU limit (`cpu_ms` 300,000 in wrangler.toml). The search trades a few
 * per cent of bytes for an answer at all.
 */
export const AVIF_SEARCH_SPEED = 7;

/**
 * `tune=iq`: libaom's tuning for still images (quantisation matrices, variance-boosted delta-q, chroma
 * delta-q, adaptive CDEF). libavif turns it on by default only with libaom 3.13 and later; with the
 * vendored 3.12.1 it must be asked for, and without it the same score costs 29–40 % more bytes.
 */
export const AVIF_OPTIONS: ReadonlyArray<readonly [string, string]> = [
  ['tune', 'iq'],
  // The loop filter's sharpness back to 0 (`tune=iq` sets 7): on the 31 camera photos at the mapped
  // qualities, 0.914 × our JPEG q80's bytes at −0.02 SSIMULACRA2 from it, against 0.943 × at +0.39 with 7
  // (q60 0.761 × at −1.36, q90 0.926 × at −0.14: within the scale's ±2.5; docs/image-engine.md).
  ['sharpness', '0'],
  // Intra block copy off: when libaom takes a cell for screen content it builds a hash of the cell's
  // blocks (AVIF_INTRABC_BYTES_PER_PIXEL), decided inside the encoder where no plan sees it; a 12 MP
  // photograph PNG was refused with 503 for it ("Error adding data to intrabc_hash_table"). On only
  // where the plan counts it: AVIF_SCREEN_OPTIONS. Palette coding, the other screen-content tool, stays.
  ['enable-intrabc', '0'],
];

/**
 * The settings of an encode whose plan counts intra block copy's hash (memory-plan.ts: a lossless input,
 * likely a screenshot, whose plan fits the budget with it): AVIF_OPTIONS with intra block copy left to
 * libaom, which turns it on only for a cell it takes for screen content (text, flat colours: photos are
 * unaffected).
 */
export const AVIF_SCREEN_OPTIONS: ReadonlyArray<readonly [string, string]> = AVIF_OPTIONS.map(([key, value]) =>
  key === 'enable-intrabc' ? ([key, '1'] as const) : ([key, value] as const),
);

/**
 * AVIF_SCREEN_OPTIONS for a picture that is screen content by AVIF_SCREEN_FLAT_SHARE: libaom's screen
 * tools (palette, intra block copy) on for every cell, whatever its own detection says. That detection
 * wants 16 × 16 blocks of at most 4 colours, which text drawn with smoothed edges does not have: on the PNG
 * bench's generated page (1280 × 2486, q80) libaom found nothing and wrote 164,567 bytes (sharp: 116,385 at
 * the same SSIMULACRA2); told, 91,325 (docs/experiments/avif-and-quality-scale.md).
 */
export const AVIF_SCREEN_CONTENT_OPTIONS: ReadonlyArray<readonly [string, string]> = [
  ...AVIF_SCREEN_OPTIONS,
  ['tune-content', 'screen'],
];

/**
 * The share of a picture's pixels equal to the pixel on their left above which an encode with intra block
 * copy (the plan's) tells libaom the picture is screen content (AVIF_SCREEN_CONTENT_OPTIONS). Screenshots
 * are mostly flat colour: 0.87–0.92 on the PNG bench's three; camera photos 0.06–0.30 (5 photos of the
 * corpus at width 2560), a 12 MP photograph PNG 0.43.
 */
export const AVIF_SCREEN_FLAT_SHARE = 0.75;

/**
 * The encoder settings for libavif's quality (0–100, already mapped from the API's: quality-scale.ts) and
 * a width × height picture (the same for every size since the cells no longer choose the speed; the
 * size stays in the signature for the benches that vary it), `search` for a size target's encodes,
 * `intrabc` where the plan counts intra block copy's hash (AVIF_SCREEN_OPTIONS), `screen` for such an
 * encode of a picture that is mostly flat colour (AVIF_SCREEN_CONTENT_OPTIONS).
 */
export function avifSettings(
  quality: number,
  _width: number,
  _height: number,
  search = false,
  intrabc = false,
  screen = false,
): AvifSettings {
  return {
    quality: Math.round(Math.max(0, Math.min(100, quality))),
    speed: search ? AVIF_SEARCH_SPEED : AVIF_SPEED,
    options: !intrabc ? AVIF_OPTIONS : screen ? AVIF_SCREEN_CONTENT_OPTIONS : AVIF_SCREEN_OPTIONS,
  };
}

/** Pixels of an RGB(A) row (`channels` bytes each) equal to the pixel on their left. */
export function flatPixels(row: Uint8Array, width: number, channels: number): number {
  let flat = 0;
  for (let i = channels, end = width * channels; i < end; i += channels) {
    let same = true;
    for (let c = 0; c < channels; c++)
      if (row[i + c] !== row[i + c - channels]) {
        same = false;
        break;
      }
    if (same) flat++;
  }
  return flat;
}

export interface AvifGrid {
  cols: number;
  rows: number;
}

/**
 * Largest cell side. Smaller cells cost bytes at their edges: three 12 MP camera photos at q80 wrote
 * 6.0–10.3 % more with 256-pixel cells than with 1024-pixel ones (384: 3.2–5.1 %, 512: 1.4–1.9 %) at
 * SSIMULACRA2 scores within 0.2 of each other (docs/image-engine.md). Cells were 256 pixels while a cell
 * was one libaom call that held the isolate (1024 × 1024 takes 0.55–0.75 s of CPU at speed 7, twice at
 * 6); libaom now gives way after every superblock (patches/aom/0101), so the cell's size is bounded by
 * memory and the bytes: libaom's working memory at speed 6 is about 36 bytes a pixel of the cell being
 * encoded (avifPeakBytes), 38 MiB for a full cell, beside the whole picture as YUV; 2048 would need 4
 * times that. The isolate-stall bench with 1024 (12 MP → AVIF, load average 12.6): probes p50 / p95 /
 * max 82 / 137 / 212 ms (target p95 ≤ 250). Even, as 4:2:0 needs.
 */
export const AVIF_MAX_CELL_SIDE = 1024;

/**
 * Largest cell side of a picture over AVIF_LARGE_PICTURE_PIXELS: a 24 MP photo's plan with 1024-pixel
 * cells (113 MiB: its YUV and output, 46 and 7 MiB, beside a cell's 38) was over MEMORY_BUDGET_MB's 100;
 * with 768 it is 96. Cells of 768 write about 1 % more bytes than 1024 (between 512's 1.4–1.9 % and 0).
 */
export const AVIF_LARGE_PICTURE_CELL_SIDE = 768;

/** Pictures over this many pixels (16 MP) take AVIF_LARGE_PICTURE_CELL_SIDE: up to 20 MP fit the budget with 1024. */
export const AVIF_LARGE_PICTURE_PIXELS = 16 * 1024 * 1024;

/**
 * One pixel of a cell's encode at AVIF_SPEED in give-way.ts's pixels of row work, for runtimes whose
 * clock stands still while code runs: an AVIF pixel at speed 6 costs about 150 times a pixel of row work
 * (100 before patches/aom/0102 gave speed 6 more search; 50 at speed 7), so the encoder gives way every
 * 13,000 pixels or so (ENGINE_SLICE_PIXELS), three 64 × 64 superblocks, as it does by the clock.
 */
export const AVIF_WORK_PER_PIXEL = 150;

/**
 * Smallest cell side: MIAF (ISO/IEC 23000-22, 7.3.11.4.2) wants a grid's cells at least 64 × 64, and
 * libavif refuses a grid of smaller ones, so a picture less than 64 pixels high (or wide) is one image
 * however wide (or high) it is; avifPeakBytes counts it as one cell.
 */
export const AVIF_MIN_CELL_SIDE = 64;

/**
 * Largest cell side of an encode with intra block copy (AVIF_SCREEN_OPTIONS): its hash's worst case
 * (AVIF_INTRABC_BYTES_PER_PIXEL) for a 1024-pixel cell, 92 MiB, fits no plan beside the rest; for a
 * 512-pixel one it is 43 MiB.
 */
export const AVIF_INTRABC_CELL_SIDE = 512;

/**
 * The grid for a width × height picture (1 × 1: one image), `intrabc` for an encode with intra block
 * copy. The module makes the cells even-sized (the last column and row take the rest) and codes a grid
 * of an odd width or height one pixel larger, cropped back by a clean aperture.
 */
export function avifGrid(width: number, height: number, intrabc = false): AvifGrid {
  if (width < AVIF_MIN_CELL_SIDE || height < AVIF_MIN_CELL_SIDE) return { cols: 1, rows: 1 };
  const side = intrabc
    ? AVIF_INTRABC_CELL_SIDE
    : width * height > AVIF_LARGE_PICTURE_PIXELS
      ? AVIF_LARGE_PICTURE_CELL_SIDE
      : AVIF_MAX_CELL_SIDE;
  return { cols: Math.ceil(width / side), rows: Math.ceil(height / side) };
}

/**
 * The pixels libaom encodes per cell of a width × height picture: the module codes every cell at the
 * first one's size (the last column and row padded; an odd-sized grid one pixel larger).
 */
export function avifCellPixels(width: number, height: number, intrabc = false): number {
  const grid = avifGrid(width, height, intrabc);
  if (grid.cols * grid.rows === 1) return width * height;
  const evenCeil = (n: number, d: number) => (Math.ceil(n / d) + 1) & ~1;
  const w = grid.cols === 1 ? width + (width & 1) : evenCeil(width + (width & 1), grid.cols);
  const h = grid.rows === 1 ? height + (height & 1) : evenCeil(height + (height & 1), grid.rows);
  return w * h;
}

/** The module's memory before any picture: its runtime, stack and libavif's encoder. */
const AVIF_BASE_BYTES = 2 * 1024 * 1024;
/**
 * libaom's working memory for one cell at AVIF_SPEED: a fixed part and bytes per pixel of the cell
 * (measured, rounded up: `BENCH_AVIF_MEMORY=1 BENCH_AVIF_MEMORY_MP=2,5 node test/bench/avif.ts`, the
 * peak less the memory after the rows, 17.0 MiB for cells of 865 × 577 and 28.9 for 913 × 913, RGB or
 * RGBA alike; speed 7 took about half a pixel's bytes).
 */
const AVIF_CELL_FIXED_BYTES = 4 * 1024 * 1024;
const AVIF_CELL_BYTES_PER_PIXEL = 36;
/**
 * What a cell coded at 10 bits adds per pixel: its widened copy (3 bytes a pixel, 5 with alpha) and
 * libaom's 16-bit frame buffers. Measured as above, the peak at 10 bits less the peak at 8, per pixel of
 * the cell: 12.3 (12 MP, 848 × 944 cells) and 12.7 (5 MP, 912 × 912) for RGB, 14.3 and 14.8 for RGBA.
 */
export const AVIF_WIDE_CELL_BYTES_PER_PIXEL = 15;
/**
 * libaom's frame buffers for a cell thinner than AVIF_MIN_CELL_SIDE, per pixel of its long side: each is
 * stored with a border of 288 pixels on every side, which a square cell's bytes a pixel take in but a
 * picture of a few rows does not (it is one cell: a grid's cells must be 64 × 64 at least). Measured on
 * the module (test/bench/lib/avif-node.ts, 10 bits, libavif 66, 16 rows): 66.5 MB at 20,000 columns and
 * 116.3 MB at 35,712, 3.17 KB a column; the borders' rows grow it to about 3.42 KB at 63 rows; rounded up.
 * Counted beside the cell's pixels, so a 35,712 × 16 picture is refused 422 with the width that fits,
 * where it ran out of memory (503) under a plan of 38 MB.
 */
export const AVIF_THIN_CELL_BYTES_PER_COLUMN = 3_584;
/** The encoded output held while cells are encoded, per pixel of the picture (a q90 photo writes under 0.4). */
const AVIF_OUTPUT_BYTES_PER_PIXEL = 0.5;

/**
 * Intra block copy's hash (AVIF_SCREEN_OPTIONS), built by libaom for a cell it takes for screen content
 * and held while the cell is encoded: a fixed part (its lookup table of 2^19 buckets, each bucket used a
 * vector of at least 10 entries) and bytes per pixel of the cell (22 of working buffers, and an 8-byte
 * entry for every position of each block size, 4 to 64, whose block is not flat). Its worst case is a
 * picture libaom takes for screen content in which no block is flat: 1-bit noise (every 16 × 16 block
 * two colours), measured over the same encode with it off (`BENCH_AVIF_SCREENS=<noise.png>
 * BENCH_AVIF_CELL=… node test/bench/avif.ts`): 92.1 MiB for a 1024 × 1024 cell, 43.0 for 512, 23.9
 * for 256; 28 MiB + 66 bytes a pixel covers all three. A screenshot's is far less (mostly flat).
 */
export const AVIF_INTRABC_FIXED_BYTES = 28 * 1024 * 1024;
export const AVIF_INTRABC_BYTES_PER_PIXEL = 66;

/**
 * The most WebAssembly memory one encode of a width × height picture needs, in bytes: the picture as 8-bit
 * YUV (1.5 bytes a pixel, 2.5 with alpha) for the whole encode, the output so far, and one cell's encoder
 * (coded at `depth` bits: 10 adds AVIF_WIDE_CELL_BYTES_PER_PIXEL; with intra block copy's hash when
 * `intrabc`).
 */
export function avifPeakBytes(
  width: number,
  height: number,
  channels: 3 | 4,
  intrabc = false,
  depth: 8 | 10 = 8,
): number {
  const grid = avifGrid(width, height, intrabc);
  const cellPixels = (Math.ceil(width / grid.cols) + 1) * (Math.ceil(height / grid.rows) + 1);
  const pixels = width * height;
  return Math.ceil(
    AVIF_BASE_BYTES +
      pixels * ((channels === 4 ? 2.5 : 1.5) + AVIF_OUTPUT_BYTES_PER_PIXEL) +
      AVIF_CELL_FIXED_BYTES +
      cellPixels * (AVIF_CELL_BYTES_PER_PIXEL + (depth > 8 ? AVIF_WIDE_CELL_BYTES_PER_PIXEL : 0)) +
      (Math.min(width, height) < AVIF_MIN_CELL_SIDE ? Math.max(width, height) * AVIF_THIN_CELL_BYTES_PER_COLUMN : 0) +
      (intrabc ? AVIF_INTRABC_FIXED_BYTES + cellPixels * AVIF_INTRABC_BYTES_PER_PIXEL : 0),
  );
}
