// JPEG XL output's settings and limits in one place: libjxl's effort, the largest picture it is given,
// and what its encoder holds (the memory plan's part for it). The API's `quality` is mapped to libjxl's
// distance beside the other formats' (src/compress/quality-scale.ts). The figures behind each value
// (`npm run bench -- jxl`) are in docs/experiments/jxl.md.

/**
 * libjxl's effort (1–9) for lossy output: 5. At the same distance it writes the bytes effort 7 writes
 * (817 against 825 KB at 12 MP, 136 against 137 KB at 2 MP) with 12–25 % less memory and in a third to a
 * half of the time at 4 MP and more; effort 3 is 4 × faster but writes 20–25 % more bytes
 * (`BENCH_JXL_MEMORY=1 npm run bench -- jxl`, docs/experiments/jxl.md).
 */
export const JXL_EFFORT = 5;

/** libjxl's effort for a lossless JPEG transcode (its default). */
export const JXL_LOSSLESS_EFFORT = 7;

/**
 * The largest output, in pixels, JPEG XL is written at, whatever the memory budget: 2048 × 2048, libjxl's
 * DC group, its unit of streaming. The encode gives way inside libjxl's two longest loops only
 * (wasm/patches/jxl/); the rest of a DC group's work (colour transform, masking, tokens, histograms:
 * about 600 ns a pixel) runs in stretches that grow with the group, some 1–1.5 s at a whole group, while
 * the isolate's other requests wait. A larger output is refused with 422, saying the width that fits.
 * Under the default MEMORY_BUDGET_MB the memory plan refuses sooner (about 1.2 MP: jxlPeakBytes).
 */
export const JXL_MAX_PIXELS = 2048 * 2048;
// A lossless transcode is one call too (1–7 s for the camera photos): the same cap holds for it.

/**
 * libjxl's working memory per pixel, beside the 8-bit picture the glue holds (wasm/src/sr_jxl.c): the
 * module's peak less the picture, measured at 0.1 to 24 MP (58–61 bytes a pixel up to one DC group,
 * docs/experiments/jxl.md), rounded up. It stops growing past about JXL_WORK_MAX_PIXELS: the streaming
 * encoder holds a few DC groups, not the picture.
 */
export const JXL_WORK_BYTES_PER_PIXEL = 62;

/** The pixels past which libjxl's working memory stops growing (measured flat from 12 to 24 MP). */
export const JXL_WORK_MAX_PIXELS = 5_000_000;

/** libjxl's working memory that does not grow with the picture (its tables, the output's first buffers). */
export const JXL_WORK_BASE_BYTES = 12 * 1024 * 1024;

/**
 * A lossless JPEG transcode's memory per input pixel beside the JPEG's copies: libjxl holds the JPEG's
 * coefficients and its own planes of them for the whole picture (no streaming): the module's peak less
 * three copies of the file was 55.6–61.9 bytes a pixel on the 31 camera photos (3–16 MP,
 * docs/experiments/jxl.md), rounded up.
 */
export const JXL_TRANSCODE_BYTES_PER_PIXEL = 62;

/** The encoder's peak for a width × height picture of `channels`: the held picture and libjxl's work. */
export const jxlPeakBytes = (width: number, height: number, channels: number): number =>
  width * height * channels +
  Math.min(width * height, JXL_WORK_MAX_PIXELS) * JXL_WORK_BYTES_PER_PIXEL +
  JXL_WORK_BASE_BYTES;

/**
 * Copies of the file a lossless transcode holds at once: the upload as JavaScript received it, its
 * rewrite without metadata (metadata=strip; for a gain-map JPEG also its two parts before they are
 * joined), the engine's copy and the output (at most about the upload). Counted whatever `metadata`
 * says: a file is about 1 % of the estimate.
 */
export const JXL_TRANSCODE_FILE_COPIES = 5;

/**
 * A lossless JPEG transcode's peak past the request's base: the file's copies (JXL_TRANSCODE_FILE_COPIES)
 * and libjxl's work over the JPEG's coefficients.
 */
export const jxlTranscodeBytes = (header: { width: number; height: number }, uploadBytes: number): number =>
  uploadBytes * JXL_TRANSCODE_FILE_COPIES +
  header.width * header.height * JXL_TRANSCODE_BYTES_PER_PIXEL +
  JXL_WORK_BASE_BYTES;

/** The most pixels a lossless transcode of a file of `uploadBytes` admits within `bytes` (jxlTranscodeBytes inverted). */
export const jxlTranscodeMaxPixels = (bytes: number, uploadBytes: number): number =>
  Math.max(
    0,
    Math.floor((bytes - uploadBytes * JXL_TRANSCODE_FILE_COPIES - JXL_WORK_BASE_BYTES) / JXL_TRANSCODE_BYTES_PER_PIXEL),
  );
