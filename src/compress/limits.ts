// Every limit of the compression API, named once. The README's "Limits" table lists them.

/** Largest accepted image part: 10 MB, counted as 10 × 1024 × 1024 bytes. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/**
 * Room for the multipart framing and the small text parts on top of the image: a request body may be
 * this much larger than MAX_IMAGE_BYTES before it is refused unread by its Content-Length.
 */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Largest `width` / `height` a caller may ask for. */
export const MAX_OUTPUT_DIMENSION = 16_384;
/**
 * Default of the var MAX_INPUT_PIXELS: the largest input (width × height) decoded. Chosen from the
 * measured memory curve (README, "Memory") so that a request stays well under the isolate's 128 MB.
 */
export const DEFAULT_MAX_INPUT_PIXELS = 3_000_000;
/** Default of the var MAX_CONCURRENT_COMPRESSIONS: admitted compressions per isolate before free keys are shed. */
export const DEFAULT_MAX_CONCURRENT_COMPRESSIONS = 4;
/** Retry-After (seconds) of a 503 `overloaded`. */
export const OVERLOAD_RETRY_AFTER_S = 2;
/** Most encodes one `target_kb` search may spend. */
export const MAX_TARGET_ENCODES = 8;
export const DEFAULT_QUALITY = 80;
/** Largest `target_kb`: the upload limit, since a target above it can never bind. */
export const MAX_TARGET_KB = MAX_IMAGE_BYTES / 1024;
