// Every limit of the compression API, named once. docs/operations.md lists them.

/** Largest accepted image part: 10 MB, counted as 10 × 1024 × 1024 bytes. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/**
 * Room for the multipart framing and the small text parts on top of the image: a request body may be
 * this much larger than MAX_IMAGE_BYTES before it is refused unread by its Content-Length.
 */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/**
 * Default of the var UPLOAD_READ_TIMEOUT_MS: the most time an upload's body may take to arrive, from the
 * start of reading it; past it the request gets 408 `request_timeout` and its unit is released. Well
 * inside a reservation's life (RESERVATION_TTL_MS, 5 min), so an upload trickled slowly can never outlive
 * the unit it holds. 10 MB in 60 s is 1.4 Mbit/s.
 */
export const DEFAULT_UPLOAD_READ_TIMEOUT_MS = 60_000;
/**
 * Largest ICC profile a PNG's iCCP chunk may inflate to; a larger one is dropped (the image is kept,
 * untagged). Profiles are a few KB to a few hundred (LUT-based printer profiles reach about 1 MB); the
 * limit stops a small chunk that inflates to gigabytes.
 */
export const MAX_ICC_PROFILE_BYTES = 4 * 1024 * 1024;
/** Largest `width` / `height` a caller may ask for. */
export const MAX_OUTPUT_DIMENSION = 16_384;
/**
 * Longest side a WebP can have (its headers store width − 1 and height − 1 in 14 bits; libwebp refuses
 * more), and a JPEG (libjpeg-turbo's JPEG_MAX_DIMENSION; the format's own limit is 65,535). An output
 * longer than its format's is refused 422 before decoding, saying the size that fits: an image kept at its
 * own size can be longer (a long screenshot or panorama, a HEIC grid), and a WebP can be asked 16,384.
 */
export const WEBP_MAX_DIMENSION = 16_383;
export const JPEG_MAX_DIMENSION = 65_500;
/**
 * Default of the var MAX_INPUT_PIXELS: the largest input (width × height) a header may declare; above
 * it the file is refused from its header alone (decompression bombs). What a request may really use is
 * decided by the memory budget below, from the header and the parameters.
 */
export const DEFAULT_MAX_INPUT_PIXELS = 100_000_000;
/**
 * Default of the var MEMORY_BUDGET_MB: the memory (MiB) the isolate gives compressions at once, summed
 * over the requests in flight, by their estimates. A Workers isolate has 128 MB for everything; the
 * other 28 are the runtime, the app and the codecs' fresh instances. 100 admits a 24-megapixel
 * progressive JPEG at full size, whose decoder alone holds 72 MB of coefficients.
 */
export const DEFAULT_MEMORY_BUDGET_MB = 100;
/**
 * Most scans a JPEG may have. Encoders write 1 (baseline) to about 12 (progressive); each scan is a pass
 * over all coefficients, so a small file of thousands of scans is a CPU bomb (libjpeg-turbo's own tools
 * offer the same guard, `-maxscans`).
 */
export const MAX_JPEG_SCANS = 100;
/** Pro requests that wait for memory at once per isolate; more get 503 `overloaded`. */
export const MEMORY_QUEUE_MAX = 8;
/** How long a pro request waits for memory before it gets 503 `overloaded`. */
export const MEMORY_QUEUE_WAIT_MS = 10_000;
/** Retry-After (seconds) of a 503 `overloaded`. */
export const OVERLOAD_RETRY_AFTER_S = 2;
/** Most encodes one `target_kb` search may spend. */
export const MAX_TARGET_ENCODES = 8;
export const DEFAULT_QUALITY = 80;
/** Largest `target_kb`: the upload limit, since a target above it can never bind. */
export const MAX_TARGET_KB = MAX_IMAGE_BYTES / 1024;
/** Bounds and default of `colors`, the palette size of palette=true. */
export const MIN_PALETTE_COLORS = 2;
export const MAX_PALETTE_COLORS = 256;

/** libwebp's lossless effort (its `quality` in lossless mode, 0–100) for lossless WebP output: cwebp's default. */
export const WEBP_LOSSLESS_EFFORT = 75;

/**
 * JPEG output keeps chroma at full resolution (4:4:4) from this quality up; below it, 4:2:0. At 90,
 * 4:2:0 took fewer bytes at equal SSIMULACRA2, butteraugli and SSIM on camera photos and the
 * wallpapers alike (docs/image-engine.md, "JPEG encoder"), so 4:4:4 is left to near-lossless requests.
 */
export const FULL_CHROMA_QUALITY = 95;

/**
 * Animations in (animated GIF, animated WebP, AVIF sequences). Most frames a file may have, and most frame
 * pixels in all: each frame counts its canvas (a GIF's frame the larger of the logical screen and its own
 * rectangle: what composing it touches, and what its image data decodes to). Issue 49 sets both for
 * animated output (Cloudflare Images takes animations up to 50 MP of frames), and they hold whether every
 * frame is written (animated WebP) or the first. Either is answered 422 `image_too_large` from the file's
 * structure, before decoding.
 */
export const MAX_ANIM_FRAMES = 1_000;
export const MAX_ANIM_FRAME_PIXELS = 100_000_000;
/** GIF input's frame limits: the animations' (MAX_ANIM_*). */
export const MAX_GIF_FRAMES = MAX_ANIM_FRAMES;
export const MAX_GIF_FRAME_PIXELS = MAX_ANIM_FRAME_PIXELS;
/**
 * Most LZW data a GIF frame may carry per pixel of its rectangle, plus a fixed allowance. Every code but a
 * clear code yields at least one pixel and codes are at most 12 bits (1.5 bytes); 3 leaves room for an
 * encoder that clears often. It bounds the work of a frame by its pixels: a small frame cannot hold
 * megabytes of codes that yield nothing.
 */
export const MAX_GIF_LZW_BYTES_PER_PIXEL = 3;
export const GIF_LZW_ALLOWANCE_BYTES = 4096;
