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
 * libaom's speed: 7 (bytes at equal SSIMULACRA2 1.071 × sharp's AVIF at effort 4, median of the 31 camera
 * photos at width 2560, 0.992–1.209; 0.24 × its time, each side decoding and resizing too). Speed 6
 * writes 6 % fewer bytes at equal score (6 photos at width 2048; 3 % at 1024) but takes about twice the
 * CPU a cell (107–144 ms against 55–68; test/bench/avif-cells.ts), which is what another request of the
 * isolate waits for: on the isolate-stall bench its probes' p95 was 665 ms against 190–253 (target 250),
 * so it stays out of full cells while cells are encoded one per call (AVIF_MAX_CELL_SIDE). Speed 6 with cells that cost speed 7's time (192 pixels)
 * loses to their edges what it gains (docs/image-engine.md, One quality scale).
 */
export const AVIF_SPEED = 7;

/**
 * libaom's speed for a picture whose cells are small: at most AVIF_SMALL_CELL_PIXELS each (a thumbnail;
 * a picture just over a cell, split in two). A pixel at speed 6 costs about twice one at AVIF_SPEED, so
 * such a cell takes no longer a call than a full cell at AVIF_SPEED, and the isolate waits no longer.
 * Bytes at our JPEG q80's SSIMULACRA2 (12 photos at width 160, all at speed 6; test/bench/avif-equal-score.ts):
 * 0.786 × JPEG's against 0.801 at speed 7. Speed 5 took 5 × speed 6's time.
 */
export const AVIF_SMALL_CELL_SPEED = 6;

/** Half a full cell (AVIF_MAX_CELL_SIDE², 256 × 256): cells up to this size take AVIF_SMALL_CELL_SPEED. */
export const AVIF_SMALL_CELL_PIXELS = 32_768;

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
  // Intra block copy off: when libaom takes a picture for screen content it builds a hash of every block
  // of the cell (about 22 bytes a pixel plus the table) that no memory plan can foresee, since the
  // detection runs inside the encoder; a 12 MP PNG was refused with 503 for it ("Error adding data to
  // intrabc_hash_table"). Palette coding, the other screen-content tool, stays.
  ['enable-intrabc', '0'],
];

/**
 * The encoder settings for libavif's quality (0–100, already mapped from the API's: quality-scale.ts) and
 * a width × height picture (its grid's cells choose the speed).
 */
export function avifSettings(quality: number, width: number, height: number): AvifSettings {
  return {
    quality: Math.round(Math.max(0, Math.min(100, quality))),
    speed: avifCellPixels(width, height) <= AVIF_SMALL_CELL_PIXELS ? AVIF_SMALL_CELL_SPEED : AVIF_SPEED,
    options: AVIF_OPTIONS,
  };
}

export interface AvifGrid {
  cols: number;
  rows: number;
}

/**
 * Largest cell side. A cell is encoded in one call, during which its isolate serves nobody else
 * (give-way.ts): 256 × 256 takes 37–60 ms of CPU at AVIF_SPEED on this machine's cores (384: 75–110 ms,
 * 512: 140–200 ms, 1024: 0.55–0.75 s), and a request waits for the cell under way and often one more, so
 * only 256 met the isolate-stall bench's target (a 12 MP photo → AVIF under `npm run dev`: health probes
 * p95 236 ms, max 440; 384: p95 389 ms). Smaller cells cost bytes: three 12 MP camera photos at q80 wrote
 * 6.0–10.3 % more than with 1024-pixel cells (384: 3.2–5.1 %, 512: 1.4–1.9 %) at SSIMULACRA2 scores within
 * 0.2 of each other; docs/image-engine.md has the figures. libaom's working memory is about 8 MiB + 18
 * bytes a pixel of the cell being encoded, beside the whole picture as YUV (a 12 MP photo peaked at
 * 23–25 MiB, 39 MiB with 1024-pixel cells). Even, as 4:2:0 needs.
 */
export const AVIF_MAX_CELL_SIDE = 512;

/**
 * One pixel of a cell's encode at AVIF_SPEED in give-way.ts's pixels of row work, for runtimes whose
 * clock stands still while code runs: an AVIF pixel costs about 50 times a pixel of row work, so the
 * encoder gives way every 40,000 pixels of superblock rows or so (ENGINE_SLICE_PIXELS), as it does by the
 * clock.
 */
export const AVIF_WORK_PER_PIXEL = 50;

/** A pixel of a width × height picture's encode in pixels of row work: twice AVIF_WORK_PER_PIXEL at AVIF_SMALL_CELL_SPEED. */
export function avifWorkPerPixel(width: number, height: number): number {
  return avifSettings(0, width, height).speed === AVIF_SPEED ? AVIF_WORK_PER_PIXEL : 2 * AVIF_WORK_PER_PIXEL;
}

/**
 * Smallest cell side: MIAF (ISO/IEC 23000-22, 7.3.11.4.2) wants a grid's cells at least 64 × 64, and
 * libavif refuses a grid of smaller ones, so a picture less than 64 pixels high (or wide) is one image
 * however wide (or high) it is; avifPeakBytes counts it as one cell.
 */
export const AVIF_MIN_CELL_SIDE = 64;

/**
 * The grid for a width × height picture (1 × 1: one image). The module makes the cells even-sized (the
 * last column and row take the rest) and codes a grid of an odd width or height one pixel larger,
 * cropped back by a clean aperture.
 */
export function avifGrid(width: number, height: number): AvifGrid {
  if (width < AVIF_MIN_CELL_SIDE || height < AVIF_MIN_CELL_SIDE) return { cols: 1, rows: 1 };
  return { cols: Math.ceil(width / AVIF_MAX_CELL_SIDE), rows: Math.ceil(height / AVIF_MAX_CELL_SIDE) };
}

/**
 * The pixels libaom encodes per cell of a width × height picture: the module codes every cell at the
 * first one's size (the last column and row padded; an odd-sized grid one pixel larger).
 */
export function avifCellPixels(width: number, height: number): number {
  const grid = avifGrid(width, height);
  if (grid.cols * grid.rows === 1) return width * height;
  const evenCeil = (n: number, d: number) => (Math.ceil(n / d) + 1) & ~1;
  const w = grid.cols === 1 ? width + (width & 1) : evenCeil(width + (width & 1), grid.cols);
  const h = grid.rows === 1 ? height + (height & 1) : evenCeil(height + (height & 1), grid.rows);
  return w * h;
}

/** The module's memory before any picture: its runtime, stack and libavif's encoder. */
const AVIF_BASE_BYTES = 2 * 1024 * 1024;
/** libaom's working memory for one cell: a fixed part and bytes per pixel of the cell (measured, rounded up). */
const AVIF_CELL_FIXED_BYTES = 8 * 1024 * 1024;
const AVIF_CELL_BYTES_PER_PIXEL = 18;
/** The encoded output held while cells are encoded, per pixel of the picture (a q90 photo writes under 0.4). */
const AVIF_OUTPUT_BYTES_PER_PIXEL = 0.5;

/**
 * The most WebAssembly memory one encode of a width × height picture needs, in bytes: the picture as YUV
 * (1.5 bytes a pixel, 2.5 with alpha) for the whole encode, the output so far, and one cell's encoder.
 */
export function avifPeakBytes(width: number, height: number, channels: 3 | 4): number {
  const grid = avifGrid(width, height);
  const cellPixels = (Math.ceil(width / grid.cols) + 1) * (Math.ceil(height / grid.rows) + 1);
  const pixels = width * height;
  return Math.ceil(
    AVIF_BASE_BYTES +
      pixels * ((channels === 4 ? 2.5 : 1.5) + AVIF_OUTPUT_BYTES_PER_PIXEL) +
      AVIF_CELL_FIXED_BYTES +
      cellPixels * AVIF_CELL_BYTES_PER_PIXEL,
  );
}
