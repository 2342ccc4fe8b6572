// The AVIF encoder's settings in one place: how the API's `quality` (1–100) maps to libavif's scale, the
// libaom speed and options every encode uses, and the grid a picture is split into so that libaom's
// working memory is that of one cell. The figures behind each value are in the AVIF part of the image
// engine's documentation.

export interface AvifSettings {
  /** libavif's quality, 0–100. */
  quality: number;
  /** libaom's cpu-used, 0–10. */
  speed: number;
  /** libaom settings by their aomenc names. */
  options: ReadonlyArray<readonly [string, string]>;
}

/** The encoder settings for the API's `quality`. (First cut from the spike: identity mapping, speed 7, tune=iq.) */
export function avifSettings(quality: number): AvifSettings {
  return { quality: Math.max(0, Math.min(100, Math.round(quality))), speed: 7, options: [['tune', 'iq']] };
}

export interface AvifGrid {
  cols: number;
  rows: number;
}

/** Largest cell side: cells of this size keep libaom's working memory at one cell's. (First cut.) */
export const AVIF_MAX_CELL_SIDE = 2048;

/** The grid for a width × height picture (1 × 1: one image); cells even-sized except the last ones. */
export function avifGrid(width: number, height: number): AvifGrid {
  return { cols: Math.ceil(width / AVIF_MAX_CELL_SIDE), rows: Math.ceil(height / AVIF_MAX_CELL_SIDE) };
}

/** The most WebAssembly memory one encode of a width × height picture needs, in bytes. (First cut:
 * the whole picture as YUV, 1.5 bytes a pixel or 2.5 with alpha, plus about 24 bytes a pixel of one cell.) */
export function avifPeakBytes(width: number, height: number, channels: 3 | 4): number {
  const grid = avifGrid(width, height);
  const cell = Math.ceil(width / grid.cols) * Math.ceil(height / grid.rows);
  return Math.ceil(width * height * (channels === 4 ? 2.5 : 1.5) + cell * 24 + 4 * 1024 * 1024);
}
