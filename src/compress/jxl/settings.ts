// JPEG XL output's settings and limits in one place: libjxl's effort, the largest picture it is given,
// and what its encoder holds (the memory plan's part for it). The API's `quality` is mapped to libjxl's
// distance beside the other formats' (src/compress/quality-scale.ts). The figures behind each value
// (`npm run bench -- jxl`) are in docs/experiments/jxl.md.

/**
 * libjxl's effort (1–9) for lossy output. Chosen on peak memory and time at 12 and 24 MP
 * (docs/experiments/jxl.md): the streaming encoder's working memory grows with effort.
 */
export const JXL_EFFORT = 7;

/** libjxl's effort for a lossless JPEG transcode (its default). */
export const JXL_LOSSLESS_EFFORT = 7;

/**
 * The largest output, in pixels, JPEG XL is written at: past it the encode holds the isolate longer than
 * other requests may wait (libjxl encodes in one call, with no point to give way) and its memory comes
 * near the budget. A larger request is refused with 422, saying the width that fits.
 */
export const JXL_MAX_PIXELS = 24_000_000;

/**
 * libjxl's working memory per output pixel at JXL_EFFORT in streaming mode, beside the 8-bit picture the
 * glue holds (wasm/src/sr_jxl.c): measured as the module's peak growth over the picture
 * (docs/experiments/jxl.md), rounded up.
 */
export const JXL_WORK_BYTES_PER_PIXEL = 4;

/** libjxl's working memory that does not grow with the picture (its tables, one group's buffers). */
export const JXL_WORK_BASE_BYTES = 16 * 1024 * 1024;

/**
 * A lossless JPEG transcode's memory per input pixel beside the JPEG's copies: libjxl's copy of the
 * JPEG's coefficients and its own planes of them (docs/experiments/jxl.md).
 */
export const JXL_TRANSCODE_BYTES_PER_PIXEL = 12;

/** The encoder's peak for a width × height picture of `channels`: the held picture and libjxl's work. */
export const jxlPeakBytes = (width: number, height: number, channels: number): number =>
  width * height * (channels + JXL_WORK_BYTES_PER_PIXEL) + JXL_WORK_BASE_BYTES;

/**
 * A lossless JPEG transcode's peak past the request's base: the upload as JavaScript received it, the engine's copy, the output
 * (at most about the upload) and libjxl's work over the JPEG's coefficients.
 */
export const jxlTranscodeBytes = (header: { width: number; height: number }, uploadBytes: number): number =>
  uploadBytes * 3 + header.width * header.height * JXL_TRANSCODE_BYTES_PER_PIXEL + JXL_WORK_BASE_BYTES;
